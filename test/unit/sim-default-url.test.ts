import { describe, expect, it } from "vitest";
import { defaultApiUrl } from "../../src/sim/default-url.ts";

describe("npm run simulate's default --url", () => {
  it("is the API that PORT and HOST start, reached on loopback when it listens on every interface", () => {
    expect(defaultApiUrl({})).toBe("http://127.0.0.1:3000");
    expect(defaultApiUrl({ PORT: "41200" })).toBe("http://127.0.0.1:41200");
    expect(defaultApiUrl({ PORT: "41200", HOST: "0.0.0.0" })).toBe("http://127.0.0.1:41200");
    expect(defaultApiUrl({ PORT: "41200", HOST: "::" })).toBe("http://127.0.0.1:41200");
    expect(defaultApiUrl({ PORT: "8080", HOST: "10.1.2.3" })).toBe("http://10.1.2.3:8080");
    expect(defaultApiUrl({ PORT: "8080", HOST: "::1" })).toBe("http://[::1]:8080");
  });

  it("names PORT or HOST when it cannot be used, and --url as the way out", () => {
    expect(() => defaultApiUrl({ PORT: "0" })).toThrow(/^PORT \(which --url defaults to\) is not valid: .*; give --url$/);
    expect(() => defaultApiUrl({ HOST: "example.com" })).toThrow(/^HOST \(which --url defaults to\) is not valid: /);
  });
});
