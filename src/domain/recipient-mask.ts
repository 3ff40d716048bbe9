// What may be shown of a destination outside its alert: a recipient in the log and the queue, a
// webhook URL in notices, attempt views and the alert history. A provider that refuses a recipient says
// so in its own words, and those name the recipient: "Twilio 21211: The 'To' number
// +14155552699 is not a valid phone number", "550 <jane@fund.example>: Recipient address
// rejected". Such a text is the owner's record of the attempt (delivery_attempts.error, which
// they read), but the worker's `warn` lines go to every log pipeline and a failed job's
// failedReason and stacktrace stay in Redis for days, shown in Bull Board: there a number keeps
// only its last 4 digits, as the SMS log transport has always shown it, and an address its
// first character and its domain. Pure.

/** A phone number as the log may show it: all but its last 4 digits starred ("+********2671"). */
export function maskedNumber(number: string): string {
  const digits = number.replace(/\D/g, "");
  return `${number.startsWith("+") ? "+" : ""}${"*".repeat(Math.max(0, digits.length - 4))}${digits.slice(-4)}`;
}

/** An email address as the log may show it: its first character and its domain ("j***@fund.example"). */
export function maskedEmail(address: string): string {
  const at = address.lastIndexOf("@");
  if (at <= 0) return "***";
  return `${Array.from(address)[0]}***${address.slice(at)}`;
}

// Looser than the addresses the API takes (recipients.ts), on purpose: what a server echoes
// back may be quoted, upper-cased or international, and a miss here is a leak.
const EMAIL_ADDRESS = /[\p{L}\p{N}.!#$%&'*+/=?^_`{|}~-]+@[\p{L}\p{N}-]+(?:\.[\p{L}\p{N}-]+)*/gu;
/** A plus, then 7 to 15 digits, spaced or dashed as a provider may write it: "+14155552699", "+1 (415) 555-2699". */
const INTERNATIONAL_NUMBER = /\+\d(?:[\s().-]{0,2}\d){6,14}/g;

/**
 * `text` with the recipient masked: `destination` (the notification's own email address or
 * number) wherever it appears, its digits however they are spaced, and, to be safe, any other
 * email address or international number (a provider may name the address a forward led to).
 */
export function withRecipientsMasked(text: string, destination?: string | null): string {
  let masked = text;
  if (destination) {
    const own = destination.includes("@") ? ownAddress(destination) : ownNumber(destination);
    if (own) masked = masked.replace(own, destination.includes("@") ? maskedEmail(destination) : maskedNumber(destination));
  }
  return masked.replace(EMAIL_ADDRESS, (address) => maskedEmail(address)).replace(INTERNATIONAL_NUMBER, (number) => maskedNumber(number));
}

/** The address as written, whatever its case (servers lower-case domains, and some the whole address). */
function ownAddress(address: string): RegExp {
  return new RegExp(escapeRegExp(address), "giu");
}

/** The number's digits, with or without its plus, spaced or not: undefined for one too short to tell from other digits. */
function ownNumber(number: string): RegExp | undefined {
  const digits = number.replace(/\D/g, "");
  if (digits.length < 7) return undefined;
  return new RegExp(`(?<!\\d)\\+?${digits.split("").join("[\\s().-]{0,2}")}(?!\\d)`, "g");
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/**
 * A webhook URL as it may be shown outside its alert: scheme, host and path. Its query often
 * carries the receiver's token (`?token=…`, a Slack or Splunk key), and a user or password may
 * sit before the host. `marked`: with `?…` where it had a query and `#…` where it had a fragment
 * (the alert history, where a rotated token must still show as a change); idempotent.
 */
export function webhookUrlShown(url: string, marked = false): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return "a URL that cannot be read";
  }
  const marks = marked ? `${parsed.search === "" ? "" : "?…"}${parsed.hash === "" ? "" : "#…"}` : "";
  return `${parsed.protocol}//${parsed.host}${parsed.pathname}${marks}`;
}
