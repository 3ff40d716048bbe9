// What a person reads of a cooldown digest (risk_alert.suppressed, pipeline/cooldown-digest.ts):
// its one-line reason, the email and the SMS. renderEmail and renderSms hand a digest here. Pure:
// no I/O, no clock.
import { formatAmount } from "../domain/reason.ts";
import type { Condition, NotificationPayload, SuppressedSummary } from "../domain/types.ts";
import {
  CONDITION_NAMES,
  SUBJECT_MAX,
  addressPage,
  categoryInDetail,
  cutAtWord,
  escapeHtml,
  factsTable,
  headerText,
  labelsShown,
  linkRow,
  oneLine,
  page,
  reasonParts,
  subjectName,
  subjectNews,
  transactionPage,
  utcTime,
  walletName,
  type EmailLinks,
  type RenderedEmail,
  type Row,
} from "./render.ts";
import { fitSms, smsWalletName } from "./render-sms.ts";

/** How the strongest held-back event is introduced, by condition. */
const STRONGEST: Readonly<Record<Condition, string>> = {
  large_transfer: "largest",
  suspicious_counterparty: "riskiest",
  unusual_activity: "busiest",
  risk_score_increase: "highest",
};

type Direction = NonNullable<SuppressedSummary["largestByToken"]>[number]["direction"];

/**
 * How a named firing is introduced: "largest", or, for an untokened large_transfer digest's
 * (largestByToken), "largest sent" or "largest received". Such a digest names a token's largest
 * sent firing over a larger receipt of it (anyone can send the wallet anything), so "largest"
 * alone was false beside a 100,000 SOL receipt left out; a token named by a receipt had no sent
 * firing, and its receipt is its largest of either. Every other digest names its highest firing.
 */
function introduced(condition: Condition, direction: Direction | undefined): string {
  return direction === undefined ? STRONGEST[condition] : `${STRONGEST[condition]} ${direction}`;
}

/** The strongest's direction when the digest names firings by it (the strongest is the first of largestByToken). */
const strongestDirection = (summary: SuppressedSummary): Direction | undefined => summary.largestByToken?.[0]?.direction;

/**
 * "2 more large_transfer firings held back during the cooldown; largest: Sent 1,000,000 SOL to
 * 8jb5…kegn (threshold 100)." "More": a cooldown is started by a notification that was sent.
 * An untokened large_transfer's names each token's largest, as the payload's largestByToken
 * does, by direction: "3 more large_transfer firings held back during the cooldown, in 2
 * tokens; largest sent: Sent 50,000 SOL to 2Rt8xt…ncv9Ud (threshold 1,000); largest received:
 * Received 1,000,000,000,000 6J9x…2xru from GryGc8…EDgx82 (threshold 1,000)." ("largest sent
 * of each: …; …" for several; "…; and 2 more tokens.").
 */
export function digestReason(condition: Condition, summary: SuppressedSummary): string {
  const strongest = oneLine(summary.strongest.reason);
  if (summary.count === 1) return `1 more ${condition} firing held back during the cooldown: ${strongest}`;
  const held = `${formatAmount(summary.count)} more ${condition} firings held back during the cooldown`;
  const tokens = tokensHeldBack(summary);
  if (tokens === undefined) return `${held}; ${introduced(condition, strongestDirection(summary))}: ${strongest}`;
  // largestByToken lists the sent tokens first, so each direction's group is one run of it.
  const groups = (["sent", "received"] as const).flatMap((direction) => {
    const named = tokens.named.filter((firing) => firing.direction === direction).map((firing) => oneLine(firing.reason).replace(/\.$/, ""));
    return named.length === 0 ? [] : [`${introduced(condition, direction)}${named.length > 1 ? " of each" : ""}: ${named.join("; ")}`];
  });
  const more = tokens.other > 0 ? [`and ${formatAmount(tokens.other)} more ${tokens.other === 1 ? "token" : "tokens"}`] : [];
  return `${held}, in ${formatAmount(tokens.count)} tokens; ${[...groups, ...more].join("; ")}.`;
}

/** A large_transfer digest's tokens when it held back firings of more than one: those named, how many others, how many in all. */
function tokensHeldBack(summary: SuppressedSummary): { named: NonNullable<SuppressedSummary["largestByToken"]>; other: number; count: number } | undefined {
  const named = summary.largestByToken ?? [];
  const other = summary.otherTokens ?? 0;
  return named.length + other > 1 ? { named, other, count: named.length + other } : undefined;
}

/**
 * What fired, by the strongest held-back firing's reason, as a firing's subject names it
 * (render.ts headline): "Large transfer to SANCTIONED", "SANCTIONED counterparty", "Large
 * transfer", "Suspicious counterparty", "Unusual activity"; "" for a score rise, whose news
 * names it. The label is the reason's (the firing's time): a digest has no other record of it.
 * `label`: the label alone ("SANCTIONED"), what a subject too short for the rest keeps.
 */
function strongestHeadline(condition: Condition, news: string, detail: string): { whole: string; label: string | null } {
  const category = categoryInDetail(detail);
  const label = category === null ? null : category.toUpperCase();
  switch (condition) {
    case "large_transfer":
      return { whole: label === null ? CONDITION_NAMES[condition] : `Large transfer ${/^(Received|Tried to receive)\b/.test(news) ? "from" : "to"} ${label}`, label };
    case "suspicious_counterparty":
      return { whole: label === null ? CONDITION_NAMES[condition] : `${label} counterparty`, label };
    case "unusual_activity":
      return { whole: CONDITION_NAMES[condition], label };
    case "risk_score_increase":
      return { whole: "", label };
  }
}

/** The fewest characters of an alias a digest's subject shows (render-sms.ts MIN_ALIAS_SHOWN). */
const MIN_NAME_SHOWN = 12;

/** Whether a subject's cut news still has its amount and the word after it ("largest: Sent 250,000 SOL…"), when it has an amount. */
function keepsAmount(cut: string, clause: string): boolean {
  const amount = /\d[\d,.]*\s+\S+/.exec(clause);
  if (amount === null) return cut !== "";
  return cut.replace(/…$/, "").length >= amount.index + amount[0].length;
}

/**
 * At its fullest "[Risk alert] Desk: 2 held back — Large transfer to SANCTIONED — largest: Sent 2
 * SOL to 6R9jQi…kFJqLF", at most SUBJECT_MAX characters as a firing's subject: the count, what
 * fired and the strongest's news. Too long, what fired gives way to its label alone ("SANCTIONED"),
 * or, without a label, to nothing ("largest" says it), then "largest:" goes, before the news
 * loses its amount and token; a long alias is cut and the news cut at a word first. The label
 * is kept before the amount. Until 2026-11-28 it was "[Risk alert] Tesorería: 2 more
 * large_transfer held back in the cooldown": a 250,000 SOL send to an OFAC-listed address,
 * held back, did not show in the inbox.
 */
export function digestSubject(payload: NotificationPayload): string {
  const { data } = payload;
  const held = data.suppressed;
  const name = walletName(data);
  if (!held) return headerText(`[Risk alert] ${name}: cooldown ended`);
  const { news, detail } = reasonParts(oneLine(held.strongest.reason));
  const shownNews = subjectNews(data.condition, news);
  const { whole, label } = strongestHeadline(data.condition, news, detail);
  const subject = (shownName: string, what: string, clause: string) =>
    `[Risk alert] ${shownName}: ${[`${formatAmount(held.count)} held back`, what, clause].filter((part) => part !== "").join(" — ")}`;
  // From the fullest to the barest, each without what the one before gave up first: what
  // fired but its label, then "largest:" (the news is the strongest's all the same).
  const strongestNews = held.count === 1 ? shownNews : `${introduced(data.condition, strongestDirection(held))}: ${shownNews}`;
  const candidates = new Map(
    ([[whole, strongestNews], [label ?? "", strongestNews], [label ?? "", shownNews]] as const).map(([what, clause]) => [`${what}\u0000${clause}`, { what, clause }]),
  );
  // A long alias is cut before the news is, to a firing's subject's length; then, the rest
  // given up and the amount still not shown, to as few characters as the SMS cuts one to.
  const names = [[name, subjectName(name)], [subjectName(name, MIN_NAME_SHOWN)]];
  let last = "";
  for (const level of names) {
    for (const { what, clause } of candidates.values()) {
      for (const shownName of level) {
        const full = subject(shownName, what, clause);
        if ([...full].length <= SUBJECT_MAX) return headerText(full);
        if (shownName !== subjectName(shownName)) continue; // too long to keep beside a cut news
        const room = SUBJECT_MAX - [...subject(shownName, what, "")].length - " — ".length;
        const cut = cutAtWord(clause, room);
        last = subject(shownName, what, cut.includes(" ") ? cut : "");
        if (keepsAmount(cut, clause)) return headerText(last);
      }
    }
  }
  return headerText(last);
}

export function renderDigestEmail(payload: NotificationPayload, links: EmailLinks = {}): RenderedEmail {
  const { data } = payload;
  const held = data.suppressed;
  const subject = digestSubject(payload);
  const alias = data.alias === null ? "" : oneLine(data.alias);
  const rows: Row[] = [
    ["Wallet", alias ? `${alias} (${data.address})` : data.address],
    ["Condition", `${CONDITION_NAMES[data.condition]} (${data.condition})`],
  ];
  if (held) {
    const more = held.count - held.eventIds.length;
    const { strongest } = held;
    const tokens = tokensHeldBack(held);
    // Of several tokens, each named one's row says which of how many it is (the strongest is the first).
    const named = (index: number) => {
      const word = capitalised(introduced(data.condition, held.largestByToken?.[index]?.direction));
      return tokens === undefined ? word : `${word}, token ${index + 1} of ${tokens.count}`;
    };
    rows.push(
      ["Held back", `${held.count} ${held.count === 1 ? "firing" : "firings"}, from ${utcTime(held.firstAt)} to ${utcTime(held.lastAt)}`],
      ["Cooldown", `${utcTime(held.windowStart)} to ${utcTime(held.windowEnd)}`],
      [named(0), oneLine(strongest.reason)],
      ["Detected at", utcTime(strongest.createdAt)],
    );
    if (strongest.transactionSignature) rows.push(["Transaction", strongest.transactionSignature]);
    // In full, as a firing's email gives it: the reason's 6…6 is what address poisoning grinds.
    if (strongest.counterparty) rows.push(["Counterparty", strongest.counterparty.address], ...linkRow("Counterparty page", addressPage(links, strongest.counterparty.address)));
    if (strongest.transactionSignature) rows.push(...linkRow("Explorer", transactionPage(links, strongest.transactionSignature)));
    // Its labels now, beside the reason's of the firing's time: a label added since (the address reported hacked) is news too.
    if (strongest.counterparty) rows.push(["Counterparty labels", `${labelsShown(strongest.counterparty.labels)}, at the cooldown's end`]);
    for (const [index, firing] of (tokens?.named ?? []).entries()) {
      if (index === 0) continue; // the strongest, above
      rows.push([named(index), oneLine(firing.reason)], ["Detected at", utcTime(firing.createdAt)]);
      if (firing.transactionSignature) rows.push(["Transaction", firing.transactionSignature], ...linkRow("Explorer", transactionPage(links, firing.transactionSignature)));
    }
    // eventIds holds the first 100 events only: the events list holds them all.
    if (tokens && tokens.other > 0) rows.push(["Other tokens", `${tokens.other} more ${tokens.other === 1 ? "token" : "tokens"} held back, in the alert's events list (GET /v1/risk/alerts/${data.alertId}/events)`]);
    rows.push(["Events", `${held.eventIds.join(", ")}${more > 0 ? ` and ${more} more` : ""} (GET /v1/risk/alerts/${data.alertId}/events)`]);
  }
  rows.push(
    ...linkRow("Wallet page", addressPage(links, data.address)),
    ["Risk score", `${data.riskScore}/100`],
    ["Alert", data.alertId],
    // When the digest was made into a message (its first attempt), not when anything fired.
    ["Summarised at", utcTime(payload.timestamp)],
  );
  const shown = rows.map(([label, value, href]): Row => (href === undefined ? [label, oneLine(value)] : [label, oneLine(value), href]));
  const intro = "The alert's cooldown held these firings back: they were recorded, not sent.";
  const width = Math.max(...shown.map(([label]) => label.length)) + 2;
  const reason = oneLine(data.reason);
  const text = [reason, intro, "", ...shown.map(([label, value]) => `${`${label}:`.padEnd(width)}${value}`), "", "-- wallet-alerts", ""].join("\n");
  const html = page(subject, [`<p style="font-size:16px"><strong>${escapeHtml(reason)}</strong></p>`, `<p>${escapeHtml(intro)}</p>`, factsTable(shown)].join("\n"));
  return { subject, text, html };
}

/**
 * "Risk alert on Cooldown desk: 2 more large_transfer held back in the cooldown; largest: Sent
 * 1,000,000 SOL to 8jb5...kegn (threshold 100)." Always one GSM-7 segment, named and cut as a
 * firing's SMS is (render-sms.ts fitSms): the strongest's label first ("riskiest (SANCTIONED
 * counterparty): Sent …"), its detail left out first, then "in the cooldown", then a long alias
 * cut (never swapped for the address), then the strongest's news at a word. Until 2026-11-28 a digest that did not fit named
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
  const which = held.count === 1 ? label : `; ${introduced(data.condition, strongestDirection(held))}${label}`;
  // Of several tokens, the first named alone (the sent, before anything anyone could send the
  // wallet), and that there were more: "…held back in the cooldown, in 2 tokens; largest sent: Sent …".
  const tokens = tokensHeldBack(held);
  const inTokens = tokens === undefined ? "" : `, in ${formatAmount(tokens.count)} tokens`;
  const intro = (where: string) => `${formatAmount(held.count)} more ${data.condition} held back${where}${inTokens}${which}: ${news}`;
  // "in the cooldown" goes before the strongest's amount does.
  return fitSms("Risk alert", name, [...(detail === "" ? [] : [`${intro(" in the cooldown")} ${detail}`]), `${intro(" in the cooldown")}.`, `${intro("")}.`]);
}

const capitalised = (word: string) => `${word[0]!.toUpperCase()}${word.slice(1)}`;
