// What the OpenAPI document's `webhooks` promise a receiver about the answers it gives must be
// what the service does (README, Notifications): a delivered notification can come again under
// its webhook-id, the owner of a disabled alert is emailed only when an address is known, and a
// Retry-After is honoured on every answer that is retried.
import { describe, expect, it } from "vitest";
import { WEBHOOK_ANSWERS } from "../../src/http/openapi-webhooks.ts";

const descriptions = Object.entries(WEBHOOK_ANSWERS);

describe("the webhooks' documented answers", () => {
  it("never promise that a delivered notification is not sent again, and ask receivers to de-duplicate on webhook-id", () => {
    for (const [status, answer] of descriptions) expect(answer.description, status).not.toMatch(/never sent again/i);
    expect(WEBHOOK_ANSWERS["2XX"]!.description).toContain("can still arrive again, under the same webhook-id");
    expect(WEBHOOK_ANSWERS["2XX"]!.description).toContain("de-duplicate on webhook-id");
  });

  it("say the owner of a disabled alert is emailed only when a token carried an email claim, and otherwise nobody is told", () => {
    for (const status of ["410", "default"]) {
      const { description } = WEBHOOK_ANSWERS[status]!;
      expect(description, status).toContain("told by email only if the token that created the alert, or one that PATCHed it since, carried an email claim");
      expect(description, status).toContain("otherwise nobody is told");
    }
  });

  it("say that a Retry-After is honoured, clamped, on every answer that is retried", () => {
    const retried = descriptions.filter(([, answer]) => answer.verdict === "retry");
    expect(retried.map(([status]) => status).sort()).toEqual(["408", "425", "429", "5XX"]);
    for (const [status, answer] of retried) expect(answer.description, status).toContain("A Retry-After (seconds or an HTTP date) is honoured: the next attempt waits at least that long (clamped to 1 s – 24 h)");
  });
});
