// The SMS a person reads, rendered from the same NotificationPayload as the email and the
// webhook: one segment where it can (GSM-7's 160 septets, or UCS-2's 70 units), facts cut
// whole, the wallet's score kept. Pure: no I/O, no clock.
import { shortAddress } from "../domain/reason.ts";
import type { NotificationPayload } from "../domain/types.ts";
import { CONDITION_NAMES, isTest, oneLine, reasonOf, walletName } from "./render.ts";
import { renderDigestSms } from "./render-digest.ts";

/** GSM 03.38 basic character set: one septet each. */
const GSM7_BASIC =
  "@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞ\u001bÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?" +
  "¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà";
/** The extension table: two septets each (escape + character). */
const GSM7_EXTENDED = "^{}\\[~]|€\f";
const BASIC = new Set(GSM7_BASIC);
const EXTENDED = new Set(GSM7_EXTENDED);

export const GSM7_SEGMENT_SEPTETS = 160;
export const UCS2_SEGMENT_UNITS = 70;

/** Typography that our own sentences use, spelled in GSM-7 so that one segment holds 160 characters, not 70. */
const TRANSLITERATIONS: Readonly<Record<string, string>> = {
  "…": "...",
  "—": "-",
  "–": "-",
  "×": "x",
  "‘": "'",
  "’": "'",
  "“": '"',
  "”": '"',
  "≥": ">=",
  "≤": "<=",
  "→": "->",
  "•": "*",
  "\u00a0": " ",
};

export function toGsm7Friendly(text: string): string {
  return text.replace(/[…—–×‘’“”≥≤→•\u00a0]/g, (c) => TRANSLITERATIONS[c] ?? c);
}

export function isGsm7(text: string): boolean {
  for (const c of text) if (!BASIC.has(c) && !EXTENDED.has(c)) return false;
  return true;
}

/** Septets `text` takes in GSM-7 (extension characters count two). Assumes isGsm7(text). */
export function gsm7Length(text: string): number {
  let septets = 0;
  for (const c of text) septets += EXTENDED.has(c) ? 2 : 1;
  return septets;
}

/** How long a segment may be, how text is counted and spelled, and how a cut is marked, in one encoding. */
type Encoding = {
  limit: number;
  length: (text: string) => number;
  spell: (text: string) => string;
  ellipsis: string;
};

const GSM7: Encoding = { limit: GSM7_SEGMENT_SEPTETS, length: gsm7Length, spell: toGsm7Friendly, ellipsis: "..." };
/** In UCS-2 our typography stays as it is: "…" is one unit, and spelled "..." it would take two more from the facts. */
const UCS2: Encoding = { limit: UCS2_SEGMENT_UNITS, length: (text) => text.length, spell: (text) => text, ellipsis: "…" };

/**
 * The SMS text: one GSM-7 segment (≤ 160 septets) whenever the content can be written in
 * GSM-7, otherwise one UCS-2 segment (≤ 70 UTF-16 units). Either way a long alias gives way
 * before the facts after it do, and the text is cut with the encoding's ellipsis. `attemptAt`
 * is when this attempt sends it: a notification sent late says how late (lateNote).
 */
export function renderSms(payload: NotificationPayload, attemptAt?: Date): string {
  if (payload.type === "risk_alert.suppressed") return renderDigestSms(payload);
  const { data } = payload;
  const head = `${isTest(payload) ? "Risk alert test" : "Risk alert"}${lateNote(happenedAt(payload), attemptAt)}`;
  const address = shortAddress(data.address);
  const named = data.alias ? walletName(data) : undefined;
  // An alias outside GSM-7 would cost the whole message its 160-character segment; the
  // short address names the wallet just as well.
  const alias = named && isGsm7(toGsm7Friendly(named)) ? named : undefined;
  // A test's reason names the wallet by its alias again: in another script, that alone would
  // cut the SMS to one UCS-2 segment of 70 characters.
  const reason = isTest(payload) ? SMS_TEST_NOTE : smsReason(payload);
  // A score-increase reason states the new score itself.
  const score = data.condition === "risk_score_increase" ? "" : `risk ${data.riskScore}/100`;
  // In a 160-character segment the wallet's score comes before the reason: a reason long
  // enough to be cut (a counterparty alert on a wallet without an alias, an NFT trade, a late
  // note) lost the score at the end. A 70-unit UCS-2 segment has room for one fact besides the
  // wallet, and the reason's amount is the news: there the score comes last, if it fits.
  const sms = (name: string, encoding: Encoding) => {
    const early = score && encoding === GSM7 ? ` (${score})` : "";
    const late = score && encoding === UCS2 ? ` ${score[0]!.toUpperCase()}${score.slice(1)}` : "";
    return `${head}: ${CONDITION_NAMES[data.condition]} on ${name}${early}${!early && ENDS_CUT.test(name) ? "" : "."} ${reason}${late}`;
  };
  // The name is GSM-7 whichever it is, so the rest of the text decides the encoding.
  const encoding = isGsm7(toGsm7Friendly(sms(address, GSM7))) ? GSM7 : UCS2;
  const spelledLength = (name: string) => encoding.length(encoding.spell(sms(name, encoding)));
  let name = alias ?? address;
  if (alias && spelledLength(alias) > encoding.limit) {
    // A long alias (up to 64 characters) gives way to the facts after it: the amount,
    // counterparty and threshold are the news, the alias only names the wallet.
    const room = encoding.limit - spelledLength("");
    name = room >= MIN_ALIAS_SHOWN ? fit(encoding.spell(alias), room, encoding, false) : address;
  }
  return fit(encoding.spell(sms(name, encoding)), encoding.limit, encoding, true);
}

const SMS_TEST_NOTE = "Sent on request to check that this channel works.";

/** Fewer characters of an alias than this name nothing; the short address (11) does better. */
const MIN_ALIAS_SHOWN = 12;

/** A name cut to fit already ends with an ellipsis, and takes no full stop after it. */
const ENDS_CUT = /(\.\.\.|…)$/;

/**
 * The reason, with a token symbol that GSM-7 cannot spell shown with "?" for each character
 * it cannot: "币安人生" as "????". Native ingest takes any 1–64 characters as a symbol, and
 * one such character would make the whole SMS one UCS-2 segment of 70 characters, too short
 * for the alias, the counterparty, the threshold and the score besides the amount: the
 * reader needs those more than the symbol's glyphs, which the email and the webhook carry as
 * given. A lookalike symbol ("USDС" with a Cyrillic С) then reads "USD?", not "USDC".
 */
function smsReason(payload: NotificationPayload): string {
  const reason = reasonOf(payload);
  const token = payload.data.transaction?.token;
  if (token === undefined) return reason;
  // As a reason written before tokenShown showed it (the raw symbol): reasons now name such a
  // token "(unlisted)", and this finds nothing in them.
  const shown = oneLine(shortAddress(token));
  const spelled = toGsm7Friendly(shown);
  if (isGsm7(spelled)) return reason;
  const standIn = Array.from(spelled, (c) => (isGsm7(c) ? c : "?")).join("");
  return reason.replaceAll(shown, () => standIn);
}

/** An SMS shows no time of its own: one sent later than this after what it reports says how much later. */
const LATE_AFTER_MS = 10 * 60_000;

/**
 * When what the notification reports happened, in epoch ms: a transaction's block time, for
 * the payload's timestamp is when its batch was evaluated, which after an outage or a backlog
 * is hours later (a transfer at 06:00 evaluated at 12:00 must not read as happening now). A
 * block time after the timestamp (a skewed clock) gives way to the timestamp. Without a
 * transaction (a score change, a test) the timestamp is the event's own time.
 */
function happenedAt(payload: NotificationPayload): number {
  const stamped = Date.parse(payload.timestamp);
  const blockTime = payload.data.transaction?.blockTime;
  if (typeof blockTime !== "number" || !Number.isFinite(blockTime)) return stamped;
  return Number.isNaN(stamped) ? blockTime * 1000 : Math.min(stamped, blockTime * 1000);
}

/**
 * " (3h ago)" when the attempt is more than LATE_AFTER_MS after `happened` (epoch ms),
 * otherwise "". Relative rather than a clock time: the phone stamps the SMS with about the
 * time it is sent, so "3h ago" counts back from a time the reader sees, in no time zone to convert.
 */
function lateNote(happened: number, attemptAt: Date | undefined): string {
  if (attemptAt === undefined) return "";
  const lateMs = attemptAt.getTime() - happened;
  if (!(lateMs > LATE_AFTER_MS)) return ""; // on time, or a timestamp that does not parse
  const minutes = Math.floor(lateMs / 60_000);
  const hours = Math.floor(minutes / 60);
  const age = hours < 1 ? `${minutes} min` : hours < 48 ? `${hours}h` : `${Math.floor(hours / 24)}d`;
  return ` (${age} ago)`;
}

/**
 * `text` cut to `limit` in `encoding` and ended with its ellipsis, never inside a character
 * (a surrogate pair, a GSM-7 escape). With `wholeWords`, a cut that falls inside a word
 * drops the whole word: part of an amount or a score reads as another one ("1,250,000" as
 * "1,250", "82/100" as "82/1"), and part of a word ("thresho...") reads as a garbled message.
 */
function fit(text: string, limit: number, encoding: Encoding, wholeWords: boolean): string {
  if (encoding.length(text) <= limit) return text;
  const room = limit - encoding.length(encoding.ellipsis);
  let kept = "";
  let used = 0;
  for (const c of text) {
    const cost = encoding.length(c);
    if (used + cost > room) break;
    kept += c;
    used += cost;
  }
  if (wholeWords) {
    const wordStart = /\S*$/.exec(kept)?.[0] ?? "";
    const wordRest = /^\S*/.exec(text.slice(kept.length))?.[0] ?? "";
    if (wordStart && wordRest && wordStart.length < kept.length) kept = kept.slice(0, -wordStart.length);
  }
  // "(flagged, risk 95,..." reads better without the comma the cut left hanging.
  return `${kept.trimEnd().replace(/[,;:]+$/, "")}${encoding.ellipsis}`;
}
