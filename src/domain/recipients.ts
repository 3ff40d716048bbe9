// Where an email or SMS alert is sent. The interface names no destination field, so an
// alert carries an optional `recipient` and falls back to the caller's own token claims
// (`email`, `phone_number`). Pure: the caller's claims and the SMS rules are passed in.
import { checkSmsNumber, isE164, type SmsNumberRules } from "./sms-number.ts";

export { isE164 };

// The WHATWG "valid email address" (what <input type=email> accepts): strict enough to
// catch typos, loose enough for every address a mail server will take, `alice@localhost`
// included (the demo's SMTP sink uses such names).
const EMAIL =
  /^[a-zA-Z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$/;
const MAX_EMAIL_LENGTH = 254; // RFC 5321 path limit less the angle brackets
const MAX_LOCAL_PART_LENGTH = 64;

export function isEmailAddress(value: string): boolean {
  if (value.length > MAX_EMAIL_LENGTH || !EMAIL.test(value)) return false;
  return value.indexOf("@") <= MAX_LOCAL_PART_LENGTH;
}

export type RecipientMethod = "email" | "sms";

export type ClaimedContacts = { email: string | undefined; phone: string | undefined };

export type RecipientResult = { ok: true; recipient: string } | { ok: false; message: string };

/**
 * Checks a given recipient, or takes the one the token claims; says why when neither works.
 * An SMS number, given or claimed, must also be one SMS alerts may text (sms-number.ts).
 */
export function resolveRecipient(
  method: RecipientMethod,
  given: string | undefined,
  claims: ClaimedContacts,
  smsRules: SmsNumberRules,
): RecipientResult {
  if (method === "email") {
    if (given !== undefined) {
      return isEmailAddress(given)
        ? { ok: true, recipient: given }
        : { ok: false, message: "must be an email address such as alice@example.com" };
    }
    if (claims.email === undefined) {
      return {
        ok: false,
        message: "is required for email alerts: give an email address, or use a token with an email claim",
      };
    }
    return isEmailAddress(claims.email)
      ? { ok: true, recipient: claims.email }
      : { ok: false, message: "is required: the token's email claim is not a usable email address" };
  }
  if (given !== undefined) {
    const verdict = checkSmsNumber(given, smsRules);
    return verdict.ok ? { ok: true, recipient: given } : { ok: false, message: verdict.reason };
  }
  if (claims.phone === undefined) {
    return {
      ok: false,
      message: "is required for sms alerts: give an E.164 phone number, or use a token with a phone_number claim",
    };
  }
  if (!isE164(claims.phone)) {
    return { ok: false, message: "is required: the token's phone_number claim is not an E.164 phone number" };
  }
  const verdict = checkSmsNumber(claims.phone, smsRules);
  return verdict.ok
    ? { ok: true, recipient: claims.phone }
    : { ok: false, message: `is required: the token's phone_number claim ${verdict.reason}` };
}

/**
 * The token's email claim when it is an address we would send to: stored as the alert's owner
 * email, where the notice of a disabled alert goes (alert health). An unusable claim is not
 * stored, as if absent: refusing the request for a claim the caller cannot change would help nobody.
 */
export function ownerEmailOf(claims: Pick<ClaimedContacts, "email">): string | undefined {
  return claims.email !== undefined && isEmailAddress(claims.email) ? claims.email : undefined;
}
