import { describe, expect, it } from "vitest";
import { checkSmsNumber, EXAMPLE_SMS_NUMBER } from "../../src/domain/sms-number.ts";

const anyCountry = { allowedCountries: undefined };

describe("checkSmsNumber: the numbers SMS alerts text", () => {
  it.each([
    ["a US number (fixed line or mobile: +1 cannot tell)", "+14155552671"],
    ["a US number in a 555-01xx fictional range of a real area code", "+12125550142"],
    ["a Canadian number", "+16135550142"],
    ["a UK mobile", "+447400123456"],
    ["a German mobile", "+4915112345678"],
    ["a French mobile", "+33612345678"],
    ["an Australian mobile", "+61412345678"],
    ["a Japanese mobile", "+819012345678"],
    ["a French VoIP number", "+33912345678"],
    ["a US toll-free number (SMS-enabled business lines)", "+18005551234"],
  ])("accepts %s: %s", (_what, number) => {
    expect(checkSmsNumber(number, anyCountry)).toEqual({ ok: true });
  });

  it("gives an example that it accepts itself", () => {
    expect(checkSmsNumber(EXAMPLE_SMS_NUMBER, anyCountry)).toEqual({ ok: true });
  });
});

describe("checkSmsNumber: the numbers it refuses, and why", () => {
  it.each([
    ["not E.164 (spaces)", "+1 415 555 2671", /^must be an E\.164 phone number such as \+14155552671$/],
    ["not E.164 (more than 15 digits)", "+12345678901234567", /^must be an E\.164 phone number/],
    ["too short (+12345)", "+12345", /^is too short for a phone number with country code \+1$/],
    ["too short (+1900)", "+1900", /^is too short for a phone number with country code \+1$/],
    ["too long for +1", "+123456789012345", /^is too long for a phone number with country code \+1$/],
    ["a country code no one uses", "+999123456", /^starts with no country code in use/],
    ["a number in the fictional 555 area code", "+15551234567", /^is not a phone number in service: no country under \+1 assigns that range/],
    ["a number in the unassigned 976 area code", "+19765551234", /^is not a phone number in service/],
    ["an Ofcom drama number", "+447700900123", /^is not a phone number in service/],
    ["a NANP 900 premium-rate number", "+19005551234", /^is a premium-rate number, which SMS alerts do not text/],
    ["a NANP 976 exchange (pay-per-call)", "+12139761234", /^is a premium-rate number \(a 976 exchange\)/],
    ["a UK premium-rate number", "+449098790000", /^is a premium-rate number/],
    ["a French premium-rate number", "+33890123456", /^is a premium-rate number/],
    ["a French shared-cost number", "+33810123456", /^is a shared-cost number/],
    ["a Spanish shared-cost number", "+34902123456", /^is a shared-cost number/],
    ["a UK personal number (070)", "+447012345678", /^is a personal \(follow-me\) number/],
    ["a NANP personal number (Twilio's +1500 test numbers)", "+15005550006", /^is a personal \(follow-me\) number/],
    ["a UK pager", "+447640123456", /^is a pager number, which cannot receive SMS/],
    ["a UK universal access number", "+445512345678", /^is a universal access number/],
    ["an Italian voicemail access number", "+3934712345678", /^is a voicemail access number/],
    ["a UK landline (libphonenumber is sure)", "+441234567890", /^is a landline \(fixed-line\) number, which cannot receive SMS/],
    ["a German landline", "+4930123456", /^is a landline/],
    ["too short for +881 (satellite)", "+881234567", /^is too short for a phone number with country code \+881$/],
    ["an Iridium satellite phone (+881)", "+8816123456789", /^is a global service number \(\+881: satellite phones/],
    ["an international shared-cost number (+808)", "+80812345678", /^is a global service number \(\+808/],
    ["an international freephone number (+800)", "+80012345678", /^is a global service number \(\+800/],
  ])("refuses %s: %s", (_what, number, reason) => {
    const verdict = checkSmsNumber(number, anyCountry);
    expect(verdict.ok).toBe(false);
    expect(verdict.ok ? "" : verdict.reason).toMatch(reason);
  });
});

describe("checkSmsNumber with SMS_ALLOWED_COUNTRIES", () => {
  it.each([
    ["a US number, US allowed", "+14155552671", ["US"]],
    ["a Canadian number, US and CA allowed", "+16135550142", ["US", "CA"]],
    ["a UK mobile, GB allowed", "+447400123456", ["GB"]],
  ])("accepts %s", (_what, number, allowedCountries) => {
    expect(checkSmsNumber(number, { allowedCountries })).toEqual({ ok: true });
  });

  it.each([
    ["a US number, only CA and GB allowed", "+14155552671", ["CA", "GB"], "is a number of US, and this service texts numbers of CA, GB only (SMS_ALLOWED_COUNTRIES)"],
    ["a Canadian number, only US allowed (both are +1)", "+16135550142", ["US"], "is a number of CA, and this service texts numbers of US only (SMS_ALLOWED_COUNTRIES)"],
    ["a Jamaican mobile, only US allowed (+1 876)", "+18765551234", ["US"], "is a number of JM, and this service texts numbers of US only (SMS_ALLOWED_COUNTRIES)"],
    ["a Guernsey mobile, only GB allowed (both are +44)", "+447911123456", ["GB"], "is a number of GG, and this service texts numbers of GB only (SMS_ALLOWED_COUNTRIES)"],
  ])("refuses %s", (_what, number, allowedCountries, reason) => {
    expect(checkSmsNumber(number, { allowedCountries })).toEqual({ ok: false, reason });
  });

  it("refuses a premium number of an allowed country as premium, and a satellite number as a global service one", () => {
    expect(checkSmsNumber("+19005551234", { allowedCountries: ["US"] })).toMatchObject({ ok: false, reason: expect.stringMatching(/^is a premium-rate number/) });
    expect(checkSmsNumber("+8816123456789", { allowedCountries: ["US"] })).toMatchObject({ ok: false, reason: expect.stringMatching(/^is a global service number/) });
  });
});
