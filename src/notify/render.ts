// What a person reads: the email (subject, text, HTML), rendered from the same
// NotificationPayload the webhook carries, and the pieces the SMS shares (render-sms.ts).
// Pure: no I/O, no clock.
import { formatAmount, formatRounded, shortAddress } from "../domain/reason.ts";
import { isSol, tokenShown } from "../domain/tokens.ts";
import type { Condition, NotificationPayload } from "../domain/types.ts";

export type RenderedEmail = { subject: string; text: string; html: string };

export const CONDITION_NAMES: Readonly<Record<Condition, string>> = {
  large_transfer: "Large transfer",
  suspicious_counterparty: "Suspicious counterparty",
  unusual_activity: "Unusual activity",
  risk_score_increase: "Risk score increase",
};

export const isTest = (payload: NotificationPayload) => payload.type === "risk_alert.test";

/**
 * Every character Unicode says a reader ignores (Default_Ignorable_Code_Point): bidi controls
 * (an unclosed U+202E shows everything after it on its line reversed, the wallet's address
 * included), zero-width characters, soft hyphens, variation selectors, tag characters, Hangul
 * fillers, which hide inside a word ("US\u00adDC\u{e0020}" read "USDC"). None of them is
 * visible; an emoji joined by U+200D falls apart into its parts, still readable.
 */
const INVISIBLE_FORMATTING = /\p{Default_Ignorable_Code_Point}/gu;
/** Whitespace and control characters: C0, DEL and C1 (NEL ends a line for some readers). */
const BREAKS = /[\s\p{Cc}]+/gu;

/** Text from a caller or a feed as one plain line: it cannot start a line, reorder what follows it, or hide. */
export function oneLine(text: string): string {
  return text.replace(INVISIBLE_FORMATTING, "").replace(BREAKS, " ").trim();
}

/** The alias when there is one, otherwise the shortened address; one line, whatever the alias holds. */
export function walletName(data: Pick<NotificationPayload["data"], "alias" | "address">): string {
  const alias = data.alias === null ? "" : oneLine(data.alias);
  return alias ? alias : shortAddress(data.address);
}

/** `[Risk alert] large_transfer on Treasury` (tests: `[Risk alert test] …`). */
export function emailSubject(payload: NotificationPayload): string {
  const tag = isTest(payload) ? "[Risk alert test]" : "[Risk alert]";
  return headerText(`${tag} ${payload.data.condition} on ${walletName(payload.data)}`);
}

/**
 * A header's text with every "=?" broken by a word joiner. An alias written as an RFC 2047
 * encoded-word ("=?UTF-8?B?4oCu?=") went out as is in an all-ASCII subject, and mail clients
 * decoded it into the bidi override or the line break that oneLine() had removed. The joiner
 * is invisible, and makes the subject non-ASCII: the mailer then encodes all of it, and the
 * reader sees the alias as its owner typed it.
 */
export function headerText(text: string): string {
  return text.replaceAll("=?", "=\u2060?");
}

/**
 * A threshold or observed value in its condition's unit: a bare "5" could be transactions,
 * a multiple, points or an amount. A large_transfer threshold is in the units of the
 * transferred token, named when there is a transaction (a test has none). Amounts, scores and
 * points read exactly (9,999.996 USDC never reads as 10,000 USDC); multiples are rounded as
 * the reason rounds them (domain/reason.ts).
 */
function inUnit(condition: Condition, value: number, token: string | undefined): string {
  switch (condition) {
    case "large_transfer": {
      const amount = formatAmount(value);
      return token === undefined ? `${amount} (in the transferred token)` : `${amount} ${token}`;
    }
    case "suspicious_counterparty":
      return `risk ${formatAmount(value)}/100`;
    case "unusual_activity":
      return `${formatRounded(value)}× the usual hourly count`;
    case "risk_score_increase":
      return `${formatAmount(value)} ${value === 1 ? "point" : "points"}`;
  }
}

/** The facts of a notification as label/value rows, shared by the text and HTML parts. */
function facts(payload: NotificationPayload): Array<[string, string]> {
  const { data } = payload;
  const alias = data.alias === null ? "" : oneLine(data.alias);
  // The token as the reason names it: a symbol only when its mint says it (tokenShown).
  const shownToken = data.transaction && tokenShown(data.transaction);
  const rows: Array<[string, string]> = [
    ["Wallet", alias ? `${alias} (${data.address})` : data.address],
    ["Condition", `${CONDITION_NAMES[data.condition]} (${data.condition})`],
    ["Threshold", inUnit(data.condition, data.threshold, shownToken)],
    ["Observed", data.observed === null ? "—" : inUnit(data.condition, data.observed, shownToken)],
    ["Risk score", `${data.riskScore}/100`],
    ["Risk factors", data.riskFactors.length > 0 ? data.riskFactors.map((f) => f.replaceAll("_", " ")).join(", ") : "none"],
  ];
  const tx = data.transaction;
  if (tx) {
    rows.push(
      ["Transaction", tx.signature],
      ["Movement", `${formatAmount(tx.amount)} ${shownToken} from ${tx.from} to ${tx.to} (${tx.type}, ${tx.status})`],
      // The mint in full: what tells a token apart, whatever symbol it gave itself.
      ["Mint", tx.mint ?? (isSol(tx) ? "none (native SOL)" : "none given")],
      ["Block time", new Date(tx.blockTime * 1000).toISOString()],
    );
  }
  rows.push(["Alert", data.alertId], ["Time", payload.timestamp]);
  // The token symbol is what the ingest API was given: a line break in it would start a row of its own.
  return rows.map(([label, value]) => [label, oneLine(value)]);
}

/** The reason, one line (a reason written before tokenShown repeats a token's symbol as given). */
export const reasonOf = (payload: NotificationPayload) => oneLine(payload.data.reason);

const TEST_NOTE = "This is a test notification, sent on request to check that this channel works.";

export function renderEmail(payload: NotificationPayload): RenderedEmail {
  const subject = emailSubject(payload);
  const rows = facts(payload);
  const width = Math.max(...rows.map(([label]) => label.length)) + 2;
  const text = [
    isTest(payload) ? TEST_NOTE : undefined,
    reasonOf(payload),
    "",
    ...rows.map(([label, value]) => `${`${label}:`.padEnd(width)}${value}`),
    "",
    "-- wallet-alerts",
    "",
  ]
    .filter((line) => line !== undefined)
    .join("\n");
  const html = page(
    subject,
    [
      isTest(payload) ? `<p><em>${escapeHtml(TEST_NOTE)}</em></p>` : "",
      `<p style="font-size:16px"><strong>${escapeHtml(reasonOf(payload))}</strong></p>`,
      `<table cellpadding="4" style="border-collapse:collapse">${rows
        .map(([label, value]) => `<tr><th align="left">${escapeHtml(label)}</th><td>${escapeHtml(value)}</td></tr>`)
        .join("")}</table>`,
    ].join("\n"),
  );
  return { subject, text, html };
}

export type DisabledNotice = { alertId: string; condition: Condition; walletName: string; reason: string };

/** The email that tells an owner their alert was disabled because delivery kept failing. */
export function renderDisabledNotice(notice: DisabledNotice): RenderedEmail {
  const subject = headerText(`[Risk alert disabled] ${notice.condition} on ${notice.walletName}`);
  const lines = [
    `Your ${notice.condition} alert ${notice.alertId} on ${notice.walletName} has been disabled: ${notice.reason}.`,
    "It sends nothing until you set its status back to active (PATCH /v1/risk/alerts/{id} with {\"status\": \"active\"}).",
  ];
  const text = `${lines.join("\n\n")}\n\n-- wallet-alerts\n`;
  const html = page(subject, lines.map((line) => `<p>${escapeHtml(line)}</p>`).join("\n"));
  return { subject, text, html };
}

function page(title: string, body: string): string {
  return `<!doctype html>\n<html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head>\n<body style="font-family:sans-serif">\n${body}\n<p style="color:#666">wallet-alerts</p>\n</body></html>\n`;
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
