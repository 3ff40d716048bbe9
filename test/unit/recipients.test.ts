import { describe, expect, it } from "vitest";
import { isE164, isEmailAddress, ownerEmailOf, resolveRecipient } from "../../src/domain/recipients.ts";

const noClaims = { email: undefined, phone: undefined };
const anyCountry = { allowedCountries: undefined };

describe("isEmailAddress", () => {
  it.each(["alice@example.com", "a.b+tag@mail.example.co.uk", "ops@localhost", "x_y-z@sub-domain.example"])(
    "accepts %s",
    (value) => {
      expect(isEmailAddress(value)).toBe(true);
    },
  );

  it.each([
    "",
    "alice",
    "alice@",
    "@example.com",
    "alice@@example.com",
    "alice @example.com",
    "alice@example..com",
    "alice@-example.com",
    "alice@example.com\n",
    "Alice <alice@example.com>",
  ])("refuses %j", (value) => {
    expect(isEmailAddress(value)).toBe(false);
  });

  it("refuses a local part over 64 characters and an address over 254", () => {
    expect(isEmailAddress(`${"a".repeat(64)}@example.com`)).toBe(true);
    expect(isEmailAddress(`${"a".repeat(65)}@example.com`)).toBe(false);
    const longDomain = Array.from({ length: 5 }, () => "d".repeat(60)).join(".");
    expect(isEmailAddress(`a@${longDomain}`)).toBe(false);
  });
});

describe("isE164", () => {
  it.each(["+15551234567", "+442071838750", "+12", "+123456789012345"])("accepts %s", (value) => {
    expect(isE164(value)).toBe(true);
  });

  it.each(["15551234567", "+05551234567", "+1", "+1234567890123456", "+1 555 123 4567", "+1-555-1234567", "+1555123456a", ""])(
    "refuses %j",
    (value) => {
      expect(isE164(value)).toBe(false);
    },
  );
});

describe("resolveRecipient", () => {
  it("prefers the given recipient over the token's claims", () => {
    expect(resolveRecipient("email", "ops@example.com", { email: "alice@example.com", phone: undefined }, anyCountry)).toEqual({
      ok: true,
      recipient: "ops@example.com",
    });
    expect(resolveRecipient("sms", "+14155550111", { email: undefined, phone: "+12125550133" }, anyCountry)).toEqual({
      ok: true,
      recipient: "+14155550111",
    });
  });

  it("falls back to the email claim for email and to the phone_number claim for sms", () => {
    const claims = { email: "alice@example.com", phone: "+12125550133" };
    expect(resolveRecipient("email", undefined, claims, anyCountry)).toEqual({ ok: true, recipient: "alice@example.com" });
    expect(resolveRecipient("sms", undefined, claims, anyCountry)).toEqual({ ok: true, recipient: "+12125550133" });
  });

  it("says what to send when there is neither a recipient nor a claim", () => {
    const email = resolveRecipient("email", undefined, noClaims, anyCountry);
    const sms = resolveRecipient("sms", undefined, noClaims, anyCountry);
    expect(email).toEqual({ ok: false, message: expect.stringContaining("email claim") });
    expect(sms).toEqual({ ok: false, message: expect.stringContaining("phone_number claim") });
  });

  it("does not take the phone claim for an email alert", () => {
    expect(resolveRecipient("email", undefined, { email: undefined, phone: "+12125550133" }, anyCountry).ok).toBe(false);
  });

  it("refuses a recipient of the wrong kind for the method", () => {
    expect(resolveRecipient("email", "+14155552671", noClaims, anyCountry)).toEqual({
      ok: false,
      message: "must be an email address such as alice@example.com",
    });
    expect(resolveRecipient("sms", "alice@example.com", noClaims, anyCountry)).toEqual({
      ok: false,
      message: "must be an E.164 phone number such as +14155552671",
    });
  });

  it("refuses a claim that is not usable rather than storing it", () => {
    expect(resolveRecipient("sms", undefined, { email: undefined, phone: "555-1234" }, anyCountry)).toEqual({
      ok: false,
      message: expect.stringContaining("not an E.164 phone number"),
    });
    expect(resolveRecipient("email", undefined, { email: "not-an-address", phone: undefined }, anyCountry).ok).toBe(false);
  });

  it("holds a given or claimed SMS number to the numbers SMS alerts text, saying why", () => {
    expect(resolveRecipient("sms", "+19005551234", noClaims, anyCountry)).toEqual({
      ok: false,
      message: expect.stringMatching(/^is a premium-rate number, which SMS alerts do not text/),
    });
    expect(resolveRecipient("sms", undefined, { email: undefined, phone: "+19005551234" }, anyCountry)).toEqual({
      ok: false,
      message: expect.stringMatching(/^is required: the token's phone_number claim is a premium-rate number/),
    });
    expect(resolveRecipient("sms", "+447400123456", noClaims, { allowedCountries: ["US", "CA"] })).toEqual({
      ok: false,
      message: "is a number of GB, and this service texts numbers of US, CA only (SMS_ALLOWED_COUNTRIES)",
    });
  });
});

describe("ownerEmailOf", () => {
  it("takes a usable email claim, and drops a missing or unusable one instead of refusing the request", () => {
    expect(ownerEmailOf({ email: "alice@fund.example" })).toBe("alice@fund.example");
    expect(ownerEmailOf({ email: undefined })).toBeUndefined();
    expect(ownerEmailOf({ email: "Alice <alice@fund.example>" })).toBeUndefined();
    expect(ownerEmailOf({ email: "" })).toBeUndefined();
  });
});
