// EMAIL_TRANSPORT and SMS_TRANSPORT: the outbox and the log are fallbacks an operator names,
// never what a missing or misspelled SMTP_URL or TWILIO_* silently turns into.
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.ts";
import { channelsOff, channelsOffWarning, emailTransportOf, smsTransportOf } from "../../src/notify/transports.ts";
import { maskedNumber } from "../../src/domain/recipient-mask.ts";
import { REQUIRED, problemsOf } from "../helpers/config-env.ts";

const TWILIO = {
  TWILIO_ACCOUNT_SID: `AC${"0".repeat(32)}`,
  TWILIO_AUTH_TOKEN: "auth-token",
  TWILIO_FROM: "+15005550006",
};
const load = (env: Record<string, string>) => loadConfig({ ...REQUIRED, ...env });

describe("EMAIL_TRANSPORT and SMS_TRANSPORT", () => {
  it("leave email and SMS off when nothing is set (no outbox, no log)", () => {
    const config = load({});
    expect(config.emailTransport).toBeUndefined();
    expect(config.smsTransport).toBeUndefined();
    expect(emailTransportOf(config)).toBeUndefined();
    expect(smsTransportOf(config)).toBeUndefined();
    expect(channelsOff(config)).toEqual(["email", "sms"]);
  });

  it("leave them off for a misspelled SMTP_URL, which is not read", () => {
    expect(channelsOff(load({ SMTP_ULR: "smtp://mail.example.com:587" }))).toEqual(["email", "sms"]);
  });

  it("send by SMTP and Twilio when SMTP_URL and TWILIO_* are set, with or without naming them", () => {
    for (const named of [{}, { EMAIL_TRANSPORT: "smtp", SMS_TRANSPORT: "twilio" }] as Record<string, string>[]) {
      const config = load({ SMTP_URL: "smtp://mail.example.com:587", ...TWILIO, ...named });
      expect([emailTransportOf(config), smsTransportOf(config)]).toEqual(["smtp", "twilio"]);
      expect(channelsOff(config)).toEqual([]);
    }
  });

  it("take the outbox and the log only when named", () => {
    const config = load({ EMAIL_TRANSPORT: "outbox", SMS_TRANSPORT: "log" });
    expect([emailTransportOf(config), smsTransportOf(config)]).toEqual(["outbox", "log"]);
    expect(channelsOff(config)).toEqual([]);
  });

  it("treat an empty value as unset", () => {
    expect(channelsOff(load({ EMAIL_TRANSPORT: "", SMS_TRANSPORT: "" }))).toEqual(["email", "sms"]);
  });

  it("refuse any other value, naming the choices", () => {
    expect(problemsOf({ EMAIL_TRANSPORT: "file" })).toContain("EMAIL_TRANSPORT: expected one of smtp, outbox");
    expect(problemsOf({ SMS_TRANSPORT: "stdout" })).toContain("SMS_TRANSPORT: expected one of twilio, log");
  });

  it("refuse smtp without SMTP_URL and twilio without TWILIO_*, so that a forgotten provider stops the process", () => {
    expect(problemsOf({ EMAIL_TRANSPORT: "smtp" })).toContain("EMAIL_TRANSPORT=smtp needs SMTP_URL");
    expect(problemsOf({ SMS_TRANSPORT: "twilio" })).toContain("SMS_TRANSPORT=twilio needs TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN and TWILIO_FROM");
  });

  it("refuse a fallback named beside its provider", () => {
    expect(problemsOf({ EMAIL_TRANSPORT: "outbox", SMTP_URL: "smtp://mail.example.com:587" })).toContain("EMAIL_TRANSPORT=outbox and SMTP_URL exclude each other");
    expect(problemsOf({ SMS_TRANSPORT: "log", ...TWILIO })).toContain("SMS_TRANSPORT=log and TWILIO_* exclude each other");
  });
});

describe("channelsOffWarning", () => {
  it("names each off channel and the settings that turn it on", () => {
    const warning = channelsOffWarning(["email", "sms"])!;
    expect(warning).toMatch(/^email and sms not configured: /);
    expect(warning).toContain("for email set SMTP_URL (or EMAIL_TRANSPORT=outbox");
    expect(warning).toContain("for sms set TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN and TWILIO_FROM (or SMS_TRANSPORT=log");
  });

  it("says nothing when every channel is on", () => {
    expect(channelsOffWarning([])).toBeUndefined();
  });
});

describe("maskedNumber", () => {
  it("keeps only the last four digits of a number", () => {
    expect(maskedNumber("+14155552671")).toBe("+*******2671");
    expect(maskedNumber("+447")).toBe("+447");
  });
});
