// TWILIO_STATUS_CALLBACK_URL: where Twilio posts each SMS's carrier status, and the URL its
// signatures cover. Refused at start when Twilio could not use it safely, or nothing could check it.
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.ts";
import { REQUIRED, problemsOf } from "../helpers/config-env.ts";

const TWILIO = {
  TWILIO_ACCOUNT_SID: `AC${"0".repeat(32)}`,
  TWILIO_AUTH_TOKEN: "auth-token",
  TWILIO_FROM: "+15005550006",
};
const URL_HTTPS = "https://alerts.example.com/v1/callbacks/twilio/sms-status";

describe("TWILIO_STATUS_CALLBACK_URL", () => {
  it("is off when unset", () => {
    expect(loadConfig({ ...REQUIRED, ...TWILIO }).twilio.statusCallbackUrl).toBeUndefined();
  });

  it("takes an https URL, exactly as written (Twilio signs the URL as given)", () => {
    const url = `${URL_HTTPS}?tenant=a%20b`;
    expect(loadConfig({ ...REQUIRED, ...TWILIO, TWILIO_STATUS_CALLBACK_URL: url }).twilio.statusCallbackUrl).toBe(url);
  });

  it("refuses plain http unless WEBHOOK_ALLOW_HTTP=true, saying so", () => {
    const http = "http://127.0.0.1:3000/v1/callbacks/twilio/sms-status";
    expect(problemsOf({ ...TWILIO, TWILIO_STATUS_CALLBACK_URL: http })).toContain(
      "TWILIO_STATUS_CALLBACK_URL: expected an https URL (Twilio would send each status in the clear; plain http only with WEBHOOK_ALLOW_HTTP=true)",
    );
    expect(loadConfig({ ...REQUIRED, ...TWILIO, WEBHOOK_ALLOW_HTTP: "true", TWILIO_STATUS_CALLBACK_URL: http }).twilio.statusCallbackUrl).toBe(http);
  });

  it("refuses it without the Twilio credentials that sign the callbacks", () => {
    expect(problemsOf({ TWILIO_STATUS_CALLBACK_URL: URL_HTTPS })).toContain(
      "TWILIO_STATUS_CALLBACK_URL needs TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN and TWILIO_FROM",
    );
  });

  it("refuses what is not a URL, a URL with a user or password, and a #fragment", () => {
    expect(problemsOf({ ...TWILIO, TWILIO_STATUS_CALLBACK_URL: "alerts.example.com/v1/callbacks/twilio/sms-status" })).toContain(
      "TWILIO_STATUS_CALLBACK_URL: expected the public https URL of POST /v1/callbacks/twilio/sms-status",
    );
    expect(problemsOf({ ...TWILIO, TWILIO_STATUS_CALLBACK_URL: "https://twilio:secret@alerts.example.com/v1/callbacks/twilio/sms-status" })).toContain(
      "TWILIO_STATUS_CALLBACK_URL: expected a URL without a user or password",
    );
    expect(problemsOf({ ...TWILIO, TWILIO_STATUS_CALLBACK_URL: `${URL_HTTPS}#rc=5` })).toContain("TWILIO_STATUS_CALLBACK_URL: expected a URL without a #fragment");
  });
});
