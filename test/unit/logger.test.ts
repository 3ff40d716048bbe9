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
    ["the previous Twilio auth token inside a config", { config: { twilio: { previousAuthToken: "twilio-previous-xyz" } } }, "twilio-previous-xyz"],
    ["the previous admin password inside a config", { config: { admin: { previousPassword: "previous-admin-pass" } } }, "previous-admin-pass"],
    ["the previous admin password", { admin: { previousPassword: "previous-admin-pass" } }, "previous-admin-pass"],
    ["the Helius auth header inside a config", { config: { heliusAuthHeader: "helius-current-header" } }, "helius-current-header"],
    ["the previous JWT secret inside a config", { config: { jwt: { previousSecret: "jwt-previous-0123456789-0123456789" } } }, "jwt-previous-0123456789"],
    ["the previous Helius auth header inside a config", { config: { previousHeliusAuthHeader: "helius-previous-header" } }, "helius-previous-header"],
  ])("redacts %s", (_name, object, secret) => {
    const { logger, text } = capture();
    logger.info(object, "something happened");
    expect(text()).toContain("something happened");
    expect(text()).toContain("[redacted]");
    expect(text()).not.toContain(secret);
  });
});
