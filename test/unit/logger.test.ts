import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { createLogger } from "../../src/logger.ts";

function capture() {
  const lines: string[] = [];
  const logger = createLogger("info", new Writable({ write: (chunk: Buffer, _e, done) => (lines.push(chunk.toString()), done()) }));
  return { logger, text: () => lines.join("") };
}

describe("logger", () => {
  it.each([
    ["an authorization header", { req: { headers: { authorization: "Bearer eyJ.secret.sig" } } }, "eyJ.secret.sig"],
    ["a webhook secret", { alert: { webhookSecret: "whsec_topsecret" } }, "whsec_topsecret"],
    ["a stored webhook secret column", { row: { webhook_secret: "whsec_column" } }, "whsec_column"],
    ["a password", { admin: { password: "hunter22hunter" } }, "hunter22hunter"],
    ["the JWT secret inside a config", { config: { jwt: { secret: "jwt-secret-0123456789-0123456789" } } }, "jwt-secret-0123456789"],
    ["the Twilio auth token inside a config", { config: { twilio: { authToken: "twilio-token-xyz" } } }, "twilio-token-xyz"],
    ["a token field", { token: "opaque-token-value" }, "opaque-token-value"],
  ])("redacts %s", (_name, object, secret) => {
    const { logger, text } = capture();
    logger.info(object, "something happened");
    expect(text()).toContain("something happened");
    expect(text()).toContain("[redacted]");
    expect(text()).not.toContain(secret);
  });
});
