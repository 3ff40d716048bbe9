// Which phone numbers an SMS alert may text. Any token with alerts:write chooses the number,
// firings are not capped per recipient, and the operator pays for every message: a number
// that merely looks like E.164 let a caller point alerts at premium-rate or satellite ranges
// whose holders are paid per message received (SMS pumping, toll fraud). So a number is
// judged by libphonenumber's numbering plans: it must be in service for its country, of a kind
// that can read an SMS and earns no one money, and in SMS_ALLOWED_COUNTRIES when that is set.
// The same judgement runs when an alert is created or changed and again before every send, so
// an alert made before a rule tightened does not keep texting. Pure.
//
// The "max" metadata: only it tells a number's type (premium-rate, shared-cost, landline…);
// "min" knows only whether a number is valid, "mobile" only whether it is a mobile one.
import { isSupportedCountry, parsePhoneNumberFromString, validatePhoneNumberLength, type NumberType } from "libphonenumber-js/max";

/** E.164: a plus, a country code that does not start with 0, at most 15 digits in all. */
const E164 = /^\+[1-9][0-9]{1,14}$/;

/** A number the 400 and the messages name as an example: valid, of a kind we text. */
export const EXAMPLE_SMS_NUMBER = "+14155552671";

export function isE164(value: string): boolean {
  return E164.test(value);
}

export type SmsNumberRules = {
  /** ISO 3166-1 alpha-2 codes (upper case) whose numbers may be texted; undefined: every country. */
  allowedCountries: readonly string[] | undefined;
};

/** `reason` follows the field's name: "recipient is a premium-rate number, …". */
export type SmsNumberVerdict = { ok: true } | { ok: false; reason: string };

/** The ISO 3166-1 alpha-2 code libphonenumber gives `number` (GB, GG, CA); undefined for none (+881, a malformed number). */
export function countryOfNumber(number: string): string | undefined {
  return parsePhoneNumberFromString(number)?.country;
}

/** Whether libphonenumber attributes numbers to this ISO 3166-1 alpha-2 code (GB, not UK). */
export function isPhoneCountry(code: string): boolean {
  return isSupportedCountry(code);
}

const WHY_NOT_TEXTED = "which SMS alerts do not text: its holder can be paid for each message, at the operator's cost";
const NO_SMS = "which cannot receive SMS: give a mobile number";

/**
 * The types that are refused, and why. Kept (not listed): MOBILE, FIXED_LINE_OR_MOBILE (where
 * the plan cannot tell them apart: the whole of +1), VOIP, TOLL_FREE (businesses text from and
 * to SMS-enabled toll-free lines; no one is paid for receiving). FIXED_LINE is refused only
 * where libphonenumber is sure of it (a range of landlines alone): Twilio cannot text a landline,
 * and the owner would otherwise learn it only from a carrier's 30006 after the alert fired.
 */
const REFUSED_TYPES: Partial<Record<NonNullable<NumberType>, string>> = {
  PREMIUM_RATE: `is a premium-rate number, ${WHY_NOT_TEXTED}`,
  SHARED_COST: `is a shared-cost number, ${WHY_NOT_TEXTED}`,
  // UK 070 and the like: forwarded anywhere, charged well above a mobile, a common scam range.
  PERSONAL_NUMBER: `is a personal (follow-me) number, ${WHY_NOT_TEXTED}`,
  PAGER: `is a pager number, ${NO_SMS}`,
  UAN: `is a universal access number (one number for a company's lines), ${NO_SMS}`,
  VOICEMAIL: `is a voicemail access number, ${NO_SMS}`,
  FIXED_LINE: `is a landline (fixed-line) number, ${NO_SMS}`,
};

/**
 * NANP numbers whose exchange (the three digits after the area code) is 976: pay-per-call lines
 * since the 1980s, reserved for them in most area codes. libphonenumber calls them ordinary
 * (fixed line or mobile), so they are named here. The 900 area code it knows as premium-rate.
 */
const NANP_PAY_PER_CALL_EXCHANGE = /^\+1[2-9][0-9]{2}976[0-9]{4}$/;

/** Whether an SMS alert may text `number`, and if not, why (a sentence after the field's name). */
export function checkSmsNumber(number: string, rules: SmsNumberRules): SmsNumberVerdict {
  if (!isE164(number)) return { ok: false, reason: `must be an E.164 phone number such as ${EXAMPLE_SMS_NUMBER}` };
  const length = validatePhoneNumberLength(number);
  const parsed = parsePhoneNumberFromString(number);
  if (length === "INVALID_COUNTRY" || parsed === undefined) {
    return { ok: false, reason: "starts with no country code in use: check the digits after the +" };
  }
  const code = `+${parsed.countryCallingCode}`;
  if (length === "TOO_SHORT") return { ok: false, reason: `is too short for a phone number with country code ${code}` };
  if (length === "TOO_LONG") return { ok: false, reason: `is too long for a phone number with country code ${code}` };
  if (length !== undefined || !parsed.isValid()) {
    return { ok: false, reason: `is not a phone number in service: no country under ${code} assigns that range (check the digits)` };
  }
  // Valid, yet of no country: +800, +808, +870, +881, +882, +883, +888, +979 (satellite phones,
  // international networks and services). Far dearer than any country's, and pumping's favourites.
  if (parsed.country === undefined) {
    return { ok: false, reason: `is a global service number (${code}: satellite phones and international networks), ${WHY_NOT_TEXTED}` };
  }
  const allowed = rules.allowedCountries;
  if (allowed !== undefined && !allowed.includes(parsed.country)) {
    return { ok: false, reason: `is a number of ${parsed.country}, and this service texts numbers of ${allowed.join(", ")} only (SMS_ALLOWED_COUNTRIES)` };
  }
  if (NANP_PAY_PER_CALL_EXCHANGE.test(number)) {
    return { ok: false, reason: `is a premium-rate number (a 976 exchange), ${WHY_NOT_TEXTED}` };
  }
  const type = parsed.getType();
  const refused = type === undefined ? undefined : REFUSED_TYPES[type];
  return refused === undefined ? { ok: true } : { ok: false, reason: refused };
}
