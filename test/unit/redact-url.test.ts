import { describe, expect, it } from "vitest";
import { redactUrl } from "../../src/redact-url.ts";

describe("redactUrl", () => {
  it.each([
    ["redis://:s3cret@127.0.0.1:6379", "redis://:***@127.0.0.1:6379"],
    ["postgres://app:s3cret@db:5432/alerts", "postgres://app:***@db:5432/alerts"],
    ["redis://127.0.0.1:6379/?password=s3cret", "redis://127.0.0.1:6379/?password=***"],
    ["redis://127.0.0.1:6379/0?db=1&Password=s3cret", "redis://127.0.0.1:6379/0?db=1&Password=***"],
    ["postgres://db/alerts?user=app&pass=s3cret&sslmode=require", "postgres://db/alerts?user=app&pass=***&sslmode=require"],
  ])("hides the password of %s", (raw, shown) => {
    expect(redactUrl(raw)).toBe(shown);
    expect(redactUrl(raw)).not.toContain("s3cret");
  });

  it("shows nothing of a URL it cannot parse", () => {
    expect(redactUrl("not a url s3cret")).toBe("(the URL cannot be parsed)");
  });
});
