// What a person reads of a cooldown digest (risk_alert.suppressed, pipeline/cooldown-digest.ts):
// its one-line reason, the email and the SMS. renderEmail and renderSms hand a digest here. Pure:
// no I/O, no clock.
import { formatAmount } from "../domain/reason.ts";
import type { Condition, NotificationPayload, SuppressedSummary } from "../domain/types.ts";
import { CONDITION_NAMES, categoryInDetail, escapeHtml, headerText, oneLine, reasonParts, walletName, type RenderedEmail } from "./render.ts";
import { fitSms, smsWalletName } from "./render-sms.ts";

/** How the strongest held-back event is introduced, by condition. */
const STRONGEST: Readonly<Record<Condition, string>> = {
  large_transfer: "largest",
  suspicious_counterparty: "riskiest",
  unusual_activity: "busiest",
  risk_score_increase: "highest",
};

/**
 * "2 more large_transfer firings held back during the cooldown; largest: Sent 1,000,000 SOL to
 * 8jb5…kegn (threshold 100)." "More": a cooldown is started by a notification that was sent.
 */
export function digestReason(condition: Condition, summary: SuppressedSummary): string {
  const strongest = oneLine(summary.strongest.reason);
  if (summary.count === 1) return `1 more ${condition} firing held back during the cooldown: ${strongest}`;
  return `${formatAmount(summary.count)} more ${condition} firings held back during the cooldown; ${STRONGEST[condition]}: ${strongest}`;
}

export function renderDigestEmail(payload: NotificationPayload): RenderedEmail {
  const { data } = payload;
  const held = data.suppressed;
  const name = walletName(data);
  const subject = headerText(`[Risk alert] ${name}: ${held ? `${held.count} more ${data.condition} held back in the cooldown` : "cooldown ended"}`);
  const alias = data.alias === null ? "" : oneLine(data.alias);
  const rows: Array<[string, string]> = [
    ["Wallet", alias ? `${alias} (${data.address})` : data.address],
    ["Condition", `${CONDITION_NAMES[data.condition]} (${data.condition})`],
  ];
  if (held) {
    const more = held.count - held.eventIds.length;
    rows.push(
      ["Held back", `${held.count} ${held.count === 1 ? "firing" : "firings"}, from ${held.firstAt} to ${held.lastAt}`],
      ["Cooldown", `${held.windowStart} to ${held.windowEnd}`],
      [capitalised(STRONGEST[data.condition]), `${oneLine(held.strongest.reason)} (${held.strongest.createdAt}, observed ${formatAmount(held.strongest.observed)})`],
      ...(held.strongest.transactionSignature ? [["Transaction", held.strongest.transactionSignature] as [string, string]] : []),
      ["Events", `${held.eventIds.join(", ")}${more > 0 ? ` and ${more} more` : ""} (GET /v1/risk/alerts/${data.alertId}/events)`],
    );
  }
  rows.push(["Risk score", `${data.riskScore}/100`], ["Alert", data.alertId], ["Time", payload.timestamp]);
  const shown = rows.map(([label, value]) => [label, oneLine(value)] as const);
  const intro = "The alert's cooldown held these firings back: they were recorded, not sent.";
  const width = Math.max(...shown.map(([label]) => label.length)) + 2;
  const reason = oneLine(data.reason);
  const text = [reason, intro, "", ...shown.map(([label, value]) => `${`${label}:`.padEnd(width)}${value}`), "", "-- wallet-alerts", ""].join("\n");
  const html =
    `<!doctype html>\n<html><head><meta charset="utf-8"><title>${escapeHtml(subject)}</title></head>\n<body style="font-family:sans-serif">\n` +
    `<p style="font-size:16px"><strong>${escapeHtml(reason)}</strong></p>\n<p>${escapeHtml(intro)}</p>\n` +
    `<table cellpadding="4" style="border-collapse:collapse">${shown
      .map(([label, value]) => `<tr><th align="left">${escapeHtml(label)}</th><td>${escapeHtml(value)}</td></tr>`)
      .join("")}</table>\n<p style="color:#666">wallet-alerts</p>\n</body></html>\n`;
  return { subject, text, html };
}

/**
 * "Risk alert on Cooldown desk: 2 more large_transfer held back in the cooldown; largest: Sent
 * 1,000,000 SOL to 8jb5...kegn (threshold 100)." Always one GSM-7 segment, named and cut as a
 * firing's SMS is (render-sms.ts fitSms): the strongest's label first ("riskiest (SANCTIONED
 * counterparty): Sent …"), its detail left out first, then "in the cooldown", then a long alias
 * cut (never swapped for the address), then the strongest's news at a word. Until 2026-12 a digest that did not fit named
 * the wallet by its address and lost the label at the end of the reason.
 */
export function renderDigestSms(payload: NotificationPayload): string {
  const { data } = payload;
  const held = data.suppressed;
  const name = smsWalletName(data);
  if (!held) return fitSms("Risk alert", name, [oneLine(data.reason)]);
  const { news, detail } = reasonParts(oneLine(held.strongest.reason));
  const category = categoryInDetail(detail);
  const label = category === null ? "" : ` (${category.toUpperCase()} counterparty)`;
  const which = held.count === 1 ? label : `; ${STRONGEST[data.condition]}${label}`;
  const intro = (where: string) => `${formatAmount(held.count)} more ${data.condition} held back${where}${which}: ${news}`;
  // "in the cooldown" goes before the strongest's amount does.
  return fitSms("Risk alert", name, [...(detail === "" ? [] : [`${intro(" in the cooldown")} ${detail}`]), `${intro(" in the cooldown")}.`, `${intro("")}.`]);
}

const capitalised = (word: string) => `${word[0]!.toUpperCase()}${word.slice(1)}`;
