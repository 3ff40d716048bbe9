// The SMS a person reads, rendered from the same NotificationPayload as the email and the
// webhook: one GSM-7 segment (160 septets), the most decisive facts first and kept, facts cut
// whole. Pure: no I/O, no clock.
import { shortAddress } from "../domain/reason.ts";
import type { NotificationPayload } from "../domain/types.ts";
import { headline, isTest, oneLine, reasonOf, reasonParts } from "./render.ts";
import { renderDigestSms } from "./render-digest.ts";
import { lateNote } from "./lateness.ts";

/** GSM 03.38 basic character set: one septet each. */
const GSM7_BASIC =
  "@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞ\u001bÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?" +
  "¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà";
/** The extension table: two septets each (escape + character). */
const GSM7_EXTENDED = "^{}\\[~]|€\f";
const BASIC = new Set(GSM7_BASIC);
const EXTENDED = new Set(GSM7_EXTENDED);

export const GSM7_SEGMENT_SEPTETS = 160;

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

/**
 * Our text in GSM-7, each character it cannot spell shown as "?": a token symbol "币安人生" in a
 * reason written before tokens.ts named it "(unlisted)" reads "????", and a lookalike "USDС"
 * (a Cyrillic С) reads "USD?", never "USDC". Nothing is transliterated here but our own
 * typography: a symbol's "Ć" read as "C" would be the lookalike again.
 */
export function spellGsm7(text: string): string {
  return Array.from(toGsm7Friendly(text), (c) => (isGsm7(c) ? c : "?")).join("");
}

/** Latin letters that no decomposition takes to GSM-7. */
const LATIN_LETTERS: Readonly<Record<string, string>> = { ł: "l", Ł: "L", đ: "d", Đ: "D", ı: "i", œ: "oe", Œ: "OE", ŀ: "l", Ŀ: "L", ħ: "h", Ħ: "H", ŧ: "t", Ŧ: "T", þ: "th", Þ: "Th", ð: "d" };

/**
 * An alias as GSM-7 can spell it, or undefined when it cannot: its owner's name for the wallet,
 * which one word of another script would cost the whole message its 160-septet segment (a
 * UCS-2 segment holds 70 characters, too few for the facts). Accented letters GSM-7 lacks lose
 * their accent ("Tesorería" → "Tesoreria", "Skarbiec Łódź" → "Skarbiec Lodz"), typography is
 * spelled as ours is, and symbols and emoji are left out ("Treasury 🏦 cold" → "Treasury cold"):
 * they name nothing. A letter or digit of another script ("Казна", "東京 desk") cannot be
 * spelled, and part of a name could read as another wallet's: undefined, and the short address.
 */
export function aliasInGsm7(alias: string): string | undefined {
  let spelled = "";
  for (const c of toGsm7Friendly(alias)) {
    const bare = LATIN_LETTERS[c] ?? c.normalize("NFD").replace(/\p{M}/gu, "");
    if (isGsm7(c)) spelled += c;
    else if (bare !== "" && isGsm7(bare)) spelled += bare;
    else if (/[\p{L}\p{N}]/u.test(c)) return undefined;
  }
  const shown = spelled.replace(/ {2,}/g, " ").trim();
  return shown === "" ? undefined : shown;
}

/** A wallet as an SMS names it: its alias in GSM-7, else its short address (which is never cut). */
export type SmsName = { text: string; isAlias: boolean };

export function smsWalletName(data: Pick<NotificationPayload["data"], "alias" | "address">): SmsName {
  const alias = data.alias === null ? undefined : aliasInGsm7(oneLine(data.alias));
  return alias === undefined ? { text: spellGsm7(shortAddress(data.address)), isAlias: false } : { text: alias, isAlias: true };
}

/**
 * The SMS text, always one GSM-7 segment (≤ 160 septets): `Risk alert on <wallet>: <headline>.
 * <news> <detail> Wallet risk 82/100.`, the most decisive facts first (the wallet, what fired
 * with the other side's label, the amount, token and direction, then the counterparty) and the
 * least decisive dropped first when the text is too long: the reason's detail (its threshold,
 * and the label the headline gives already), then the wallet's score, then the tail of a long alias,
 * then the news from its end, a whole word at a time. Until 2026-11-28 the label came last in the
 * reason and was cut first, and an alias that did not fit gave way to the longer short address:
 * a sanctions hit on "Treasury" read "Suspicious counterparty on FGK2...JBGr (risk 90/100).
 * Tried to receive 12,345,678.912345678 JitoSOL from 6R9jQi...kFJqLF in an NFT...".
 * `attemptAt` is when this attempt sends it: a notification sent late says how late (lateNote).
 */
export function renderSms(payload: NotificationPayload, attemptAt?: Date): string {
  if (payload.type === "risk_alert.suppressed") return renderDigestSms(payload);
  const { data } = payload;
  const head = `${isTest(payload) ? "Risk alert test" : "Risk alert"}${lateNote(payload, attemptAt)}`;
  const lead = headline(payload);
  // A test's reason names the wallet by its alias again, as its owner typed it.
  const { news, detail } = isTest(payload) ? { news: SMS_TEST_NOTE, detail: "" } : reasonParts(reasonOf(payload));
  // "Wallet": a bare "(risk 0/100)" beside a 25,000 USDC transfer read as a verdict on the
  // transfer. A score rise states the new score in its news.
  const score = data.condition === "risk_score_increase" ? "" : ` Wallet risk ${data.riskScore}/100.`;
  const body = (withDetail: boolean, withScore: boolean) =>
    `${lead === "" ? "" : `${lead}. `}${news}${withDetail && detail !== "" ? ` ${detail}` : "."}${withScore ? score : ""}`;
  return fitSms(head, smsWalletName(data), [body(true, true), body(false, true), body(false, false)]);
}

const SMS_TEST_NOTE = "Sent on request to check that this channel works";

/** Fewer characters of an alias than this name nothing: it is cut no shorter. */
const MIN_ALIAS_SHOWN = 12;

/**
 * `${head} on ${name}: ${body}` in one GSM-7 segment. `bodies` go from the fullest to the barest,
 * each without the least decisive fact the one before it had: the first that fits is taken.
 * Past the barest, an alias is cut (to no fewer than MIN_ALIAS_SHOWN characters: never swapped
 * for an address, which names the wallet less well), then the text at a whole word.
 */
export function fitSms(head: string, name: SmsName, bodies: readonly string[]): string {
  const text = (shownName: string, body: string) => `${head} on ${shownName}: ${spellGsm7(body)}`;
  for (const body of bodies) {
    const whole = text(name.text, body);
    if (gsm7Length(whole) <= GSM7_SEGMENT_SEPTETS) return whole;
  }
  const barest = bodies.at(-1) ?? "";
  let shownName = name.text;
  const room = GSM7_SEGMENT_SEPTETS - gsm7Length(text("", barest));
  if (name.isAlias && gsm7Length(name.text) > room) shownName = fit(name.text, Math.max(room, MIN_ALIAS_SHOWN), false);
  return fit(text(shownName, barest), GSM7_SEGMENT_SEPTETS, true);
}

/**
 * `text` cut to `limit` septets and ended with "...", never inside a GSM-7 escape. With
 * `wholeWords`, a cut that falls inside a word drops the whole word: part of an amount or a
 * score reads as another one ("1,250,000" as "1,250", "82/100" as "82/1"), and part of a word
 * ("thresho...") reads as a garbled message.
 */
function fit(text: string, limit: number, wholeWords: boolean): string {
  if (gsm7Length(text) <= limit) return text;
  const room = limit - ELLIPSIS.length;
  let kept = "";
  let used = 0;
  for (const c of text) {
    const cost = gsm7Length(c);
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
  return `${kept.trimEnd().replace(/[,;:]+$/, "")}${ELLIPSIS}`;
}

const ELLIPSIS = "...";
