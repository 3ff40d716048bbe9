// What a person reads: the email (subject, text, HTML), rendered from the same
// NotificationPayload the webhook carries, and the pieces the SMS shares (render-sms.ts).
// Pure: no I/O, no clock.
import { formatAmount, formatRounded, shortAddress } from "../domain/reason.ts";
import { webhookUrlShown } from "../domain/recipient-mask.ts";
import { isSol, tokenNamed, tokenShown, wellKnownSymbol } from "../domain/tokens.ts";
import { LABEL_CATEGORIES, type Condition, type LabelCategory, type NotificationMethod, type NotificationPayload, type PayloadCounterparty } from "../domain/types.ts";
import { happenedAt, lateBy, lateNote } from "./lateness.ts";
import { renderDigestEmail } from "./render-digest.ts";

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

/** The longest subject, in characters: RFC 5322's line length, about what a phone's inbox list shows. */
export const SUBJECT_MAX = 78;
/** An alias longer than this is cut in a subject that is too long: the reason is the news, the alias only names the wallet. */
const SUBJECT_NAME_MAX = 24;

/**
 * `[Risk alert] Treasury: SANCTIONED counterparty — Sent 2,000 SOL to 6R9jQi…kFJqLF`: the wallet,
 * what fired (headline) and what happened (the reason's news), at most SUBJECT_MAX characters:
 * a long alias is cut first, then the news at a word (never inside an amount); the headline
 * stays whole, so two conditions fired by one transaction never share a subject. Until 2026-11-28
 * the subject was the reason up to its first parenthesis, which is where "sanctioned" sits: a
 * sanctions hit and a routine large transfer of one transaction had the same subject, and mail
 * clients threaded them into one conversation. A test's names its condition:
 * `[Risk alert test] large_transfer on Treasury`. `attemptAt` is when this attempt sends it: one
 * sent late says how late, as the SMS does (lateness.ts): `[Risk alert (3h ago)] Treasury: …`.
 */
export function emailSubject(payload: NotificationPayload, attemptAt?: Date): string {
  const name = walletName(payload.data);
  const late = lateNote(payload, attemptAt);
  if (isTest(payload)) return headerText(`[Risk alert test${late}] ${payload.data.condition} on ${name}`);
  const lead = headline(payload);
  const { news } = reasonParts(reasonOf(payload));
  const clause = subjectNews(payload.data.condition, news);
  const subject = (shownName: string, shownClause: string) =>
    `[Risk alert${late}] ${shownName}: ${[lead, shownClause].filter((part) => part !== "").join(" — ")}`;
  const whole = subject(name, clause);
  if ([...whole].length <= SUBJECT_MAX) return headerText(whole);
  const shortName = subjectName(name);
  const room = SUBJECT_MAX - [...subject(shortName, "")].length - (lead === "" ? 0 : " — ".length);
  const cut = cutAtWord(clause, room);
  // "Sent…" alone tells nothing the headline does not.
  return headerText(subject(shortName, cut.includes(" ") ? cut : ""));
}

/** A score rise's "Risk score rose 36 points, from 60 to 96" (riskScoreIncreaseReason), which the subject says in fewer characters, "Risk score 60 → 96", to leave room for its cause. */
const SCORE_RISE = /^Risk score rose \d+ points?, from (\d+) to (\d+)/;

/** A reason's news as a subject says it: a score rise's in fewer characters (SCORE_RISE). */
export const subjectNews = (condition: Condition, news: string) => (condition === "risk_score_increase" ? news.replace(SCORE_RISE, "Risk score $1 → $2") : news);

/** A wallet's name in a subject that is too long: an alias past `max` (SUBJECT_NAME_MAX) characters cut, with "…". */
export const subjectName = (name: string, max = SUBJECT_NAME_MAX) => ([...name].length > max ? `${[...name].slice(0, max - 1).join("").trimEnd()}…` : name);

/** A label category as the subject and the SMS lead with it: "SANCTIONED", seen before anything else. */
const shouted = (category: string) => category.toUpperCase();

/**
 * What fired, as the subject and the SMS lead with it, from the payload's fields (a reason is
 * for reading): "Large transfer", "Large transfer to SANCTIONED" / "from EXCHANGE" (the other
 * side's label, the highest first), "SANCTIONED counterparty" (a suspicious_counterparty crossed
 * by that label), "Suspicious counterparty, risk 90" (crossed by its own score), "Unusual
 * activity"; "" for a score rise, whose news names it ("Risk score rose …"). A test names its
 * condition.
 */
export function headline(payload: NotificationPayload): string {
  const { condition, counterparty, direction } = payload.data;
  if (isTest(payload)) return CONDITION_NAMES[condition];
  const top = counterparty?.labels[0];
  switch (condition) {
    case "large_transfer":
      if (!top) return CONDITION_NAMES[condition];
      return `Large transfer ${direction === "received" ? "from" : direction === "sent" ? "to" : "with"} ${shouted(top.category)}`;
    case "suspicious_counterparty":
      if (top && counterparty?.risk === top.score) return `${shouted(top.category)} counterparty`;
      return counterparty?.risk == null ? CONDITION_NAMES[condition] : `${CONDITION_NAMES[condition]}, risk ${formatAmount(counterparty.risk)}`;
    case "unusual_activity":
      return CONDITION_NAMES[condition];
    case "risk_score_increase":
      return "";
  }
}

/**
 * A reason split for the subject and the SMS: `news`, what happened ("Sent 25,000 USDC to
 * 9WzDXw…YtAWWM"; a score rise with its cause, "Risk score rose 36 points, from 60 to 96:
 * sanctioned counterparty"), without a full stop; and `detail`, the reason's parenthesis
 * ("(sanctioned, risk 95, threshold 75)."), which they leave out first. A token the reason names
 * "(unlisted)" (tokens.ts UNLISTED_TOKEN) is part of the news.
 */
export function reasonParts(reason: string): { news: string; detail: string } {
  const open = reason.search(/ \((?!unlisted\))/);
  const close = open < 0 ? -1 : reason.indexOf(")", open);
  if (close < 0) return { news: reason.replace(/\.$/, ""), detail: "" };
  const before = reason.slice(0, open);
  const parenthesis = reason.slice(open + 1, close + 1);
  const after = reason.slice(close + 1).replace(/\.$/, "");
  // "… (threshold 10): sanctioned counterparty.": the cause is news, the threshold detail.
  if (after.startsWith(": ")) return { news: `${before}${after}`, detail: `${parenthesis}.` };
  return { news: before, detail: `${parenthesis}${after}.` };
}

/** The label category a reason's detail names first ("(sanctioned, risk 100, threshold 75)."), or null: a digest has no other record of it. */
export function categoryInDetail(detail: string): LabelCategory | null {
  const first = /^\(([a-z]+),/.exec(detail)?.[1];
  return LABEL_CATEGORIES.find((category) => category === first) ?? null;
}

/**
 * `text` in at most `max` characters, cut before a word rather than inside it ("25,000" never
 * reads "25,"), ended with "…"; "" when not even its first word fits.
 */
export function cutAtWord(text: string, max: number): string {
  const characters = [...text];
  if (characters.length <= max) return text;
  if (max < 2) return "";
  let kept = characters.slice(0, max - 1).join("");
  const space = kept.lastIndexOf(" ");
  if (characters[max - 1] !== " ") kept = space > 0 ? kept.slice(0, space) : "";
  kept = kept.trimEnd().replace(/[,;:]+$/, "");
  return kept === "" ? "" : `${kept}…`;
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
 * transferred token, named when there is a transaction (a firing's) or a token filter (a
 * test's `token`); without either, any token's. Amounts, scores and
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
      // Not "the usual count": on a quiet wallet the baseline is the floor (the reason says which).
      return `${formatRounded(value)}× the hourly baseline`;
    case "risk_score_increase":
      return `${formatAmount(value)} ${value === 1 ? "point" : "points"}`;
  }
}

/**
 * An alert's token filter as a person should read it, as tokenShown names a transaction's token:
 * a well-known symbol or mint by its symbol ("usdc" → "USDC"), any other mint shortened, any
 * other symbol as its owner typed it.
 */
function filterShown(filter: string): string {
  const token = tokenNamed(filter);
  if ("mint" in token) return wellKnownSymbol(token.mint) ?? shortAddress(token.mint);
  return oneLine(filter);
}

/** " (5 transactions in the hour, baseline 1 per hour)": what an unusual_activity's multiple is of; "" without the counts. */
function activityShown(activity: NotificationPayload["data"]["activity"]): string {
  if (activity === undefined) return "";
  const noun = activity.count === 1 ? "transaction" : "transactions";
  return ` (${formatAmount(activity.count)} ${noun} in the hour, baseline ${formatRounded(activity.baselinePerHour)} per hour)`;
}

/** Optional parts of the email that the deployment sets (EXPLORER_TX_URL, EXPLORER_ADDRESS_URL). */
export type EmailLinks = {
  /** A transaction's page on a block explorer, `{signature}` standing for its signature; undefined: no link. */
  explorerTxUrl?: string | undefined;
  /** An account's page on a block explorer, `{address}` standing for its address; undefined: no link. */
  explorerAddressUrl?: string | undefined;
};

/** A transaction's explorer page, or undefined when the deployment links none. */
export const transactionPage = (links: EmailLinks, signature: string) => links.explorerTxUrl?.replaceAll("{signature}", encodeURIComponent(signature));

/**
 * An address's explorer page, or undefined when the deployment links none: where the wallet's
 * other movements show, and where the counterparty sent the funds next, which a responder
 * otherwise looked up by copying a 44-character address on a phone.
 */
export const addressPage = (links: EmailLinks, address: string) => links.explorerAddressUrl?.replaceAll("{address}", encodeURIComponent(address));

/** A fact: label, value and, for a link, where it goes (the HTML part links the value). */
export type Row = [label: string, value: string, href?: string];

/** A row linking `url` when there is one, none otherwise. */
export const linkRow = (label: string, url: string | undefined): Row[] => (url ? [[label, url, url]] : []);

/**
 * A time as a person reads it, in UTC and saying so: "2026-11-28 11:58:20 UTC" (epoch ms or ISO
 * 8601). Was the ISO form, "2026-11-28T11:58:20.000Z", whose zone is one letter at the end.
 * A time that does not parse is shown as it came.
 */
export function utcTime(time: number | string): string {
  const date = new Date(time);
  if (Number.isNaN(date.getTime())) return String(time);
  return `${date.toISOString().slice(0, 19).replace("T", " ")} UTC`;
}

/** The facts of a notification as label/value rows, shared by the text and HTML parts. */
function facts(payload: NotificationPayload, links: EmailLinks = {}): Row[] {
  const { data } = payload;
  const alias = data.alias === null ? "" : oneLine(data.alias);
  // The token as the reason names it: a symbol only when its mint says it (tokenShown); a
  // test's, as its alert's filter names it.
  const shownToken = data.transaction ? tokenShown(data.transaction) : data.token === undefined ? undefined : filterShown(data.token);
  const rows: Row[] = [
    ["Wallet", alias ? `${alias} (${data.address})` : data.address],
    ["Condition", `${CONDITION_NAMES[data.condition]} (${data.condition})`],
    ["Threshold", inUnit(data.condition, data.threshold, shownToken)],
    ["Observed", data.observed === null ? "—" : `${inUnit(data.condition, data.observed, shownToken)}${activityShown(data.activity)}`],
    ["Risk score", `${data.riskScore}/100`],
    ["Risk factors", data.riskFactors.length > 0 ? data.riskFactors.map((f) => f.replaceAll("_", " ")).join(", ") : "none"],
  ];
  const tx = data.transaction;
  // An unusual_activity's transaction is the newest of its hour, not the incident.
  const [txLabel, movementLabel] = data.condition === "unusual_activity" ? ["Latest transaction", "Latest movement"] : ["Transaction", "Movement"];
  if (tx) {
    rows.push(
      [txLabel, tx.signature],
      [movementLabel, `${formatAmount(tx.amount)} ${shownToken} from ${tx.from} to ${tx.to} (${tx.type}, ${tx.status})`],
      // The mint in full: what tells a token apart, whatever symbol it gave itself.
      ["Mint", tx.mint ?? (isSol(tx) ? "none (native SOL)" : "none given")],
      ["Block time", utcTime(tx.blockTime * 1000)],
    );
    // In full: shortened, a lookalike (address-poisoning) address read exactly as the desk's own.
    const counterparty = tx.from === data.address ? tx.to : tx.from;
    if (counterparty !== data.address) rows.push(["Counterparty", counterparty], ...linkRow("Counterparty page", addressPage(links, counterparty)));
    rows.push(...linkRow("Explorer", transactionPage(links, tx.signature)));
  }
  if (data.counterparty) rows.push(...counterpartyRows(data.counterparty));
  rows.push(...linkRow("Wallet page", addressPage(links, data.address)));
  // A firing's timestamp is when its transaction's batch was evaluated (after a backlog, hours
  // after the block time above); a test's, when it was asked for.
  rows.push(["Alert", data.alertId], [isTest(payload) ? "Requested at" : "Detected at", utcTime(payload.timestamp)]);
  // The token symbol is what the ingest API was given: a line break in it would start a row of its own.
  return rows.map(([label, value, href]): Row => (href === undefined ? [label, oneLine(value)] : [label, oneLine(value), href]));
}

/**
 * The other side's risk and every label of it, each with the list that gave it: the source
 * ("OFAC SDN") is what a compliance analyst cites, and no other channel named it. A label loaded
 * without one says so ("no source"), where it read "source )"; a payload made until 2026-11-28,
 * redelivered, has "" for it, said alike.
 */
function counterpartyRows(counterparty: NonNullable<NotificationPayload["data"]["counterparty"]>): Row[] {
  return [
    ["Counterparty risk", counterparty.risk === null ? "unknown" : `${formatAmount(counterparty.risk)}/100`],
    ["Counterparty labels", labelsShown(counterparty.labels)],
  ];
}

/** "sanctioned (score 100, source OFAC SDN); exchange (score 10, no source)", or "none". */
export function labelsShown(labels: PayloadCounterparty["labels"]): string {
  const shown = labels.map((label) => `${label.category} (score ${formatAmount(label.score)}, ${label.source ? `source ${label.source}` : "no source"})`);
  return shown.length > 0 ? shown.join("; ") : "none";
}

/** The reason, one line (a reason written before tokenShown repeats a token's symbol as given). */
export const reasonOf = (payload: NotificationPayload) => oneLine(payload.data.reason);

const TEST_NOTE = "This is a test notification, sent on request to check that this channel works.";

/**
 * The first line of an email sent more than 10 minutes after what it reports (lateness.ts):
 * "Sent late: this happened 3h ago, at 2026-03-01 12:00:00 UTC.", undefined when on time.
 */
function lateLine(payload: NotificationPayload, attemptAt: Date | undefined): string | undefined {
  const late = lateBy(payload, attemptAt);
  return late === undefined ? undefined : `Sent late: this happened ${late} ago, at ${utcTime(happenedAt(payload))}.`;
}

/** `attemptAt`: when this attempt sends it, for the late note (none: not marked). */
export function renderEmail(payload: NotificationPayload, links: EmailLinks = {}, attemptAt?: Date): RenderedEmail {
  if (payload.type === "risk_alert.suppressed") return renderDigestEmail(payload, links);
  const subject = emailSubject(payload, attemptAt);
  const rows = facts(payload, links);
  const width = Math.max(...rows.map(([label]) => label.length)) + 2;
  const late = lateLine(payload, attemptAt);
  const text = [
    late,
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
      late === undefined ? "" : `<p><strong>${escapeHtml(late)}</strong></p>`,
      isTest(payload) ? `<p><em>${escapeHtml(TEST_NOTE)}</em></p>` : "",
      `<p style="font-size:16px"><strong>${escapeHtml(reasonOf(payload))}</strong></p>`,
      factsTable(rows),
    ].join("\n"),
  );
  return { subject, text, html };
}

export type DisabledNotice = {
  alertId: string;
  condition: Condition;
  walletName: string;
  /** The tracked wallet's address, in full: an owner with several wallets of one alias can tell them apart. */
  address: string;
  reason: string;
  /** The alert's channel and where it sent: the one that failed, when an owner has several alerts on a wallet. */
  channel: NotificationMethod;
  destination: string | null;
};

/** The email that tells an owner their alert was disabled because delivery kept failing. */
export function renderDisabledNotice(notice: DisabledNotice): RenderedEmail {
  const subject = headerText(`[Risk alert disabled] ${notice.condition} on ${notice.walletName}`);
  const lines = [
    `Your ${notice.condition} alert ${notice.alertId} on ${notice.walletName} (${notice.address}) has been disabled: ${notice.reason}.`,
    `Its notifications go by ${notice.channel} to ${destinationShown(notice.channel, notice.destination)}.`,
    `It sends nothing until you set its status back to active (PATCH /v1/risk/alerts/${notice.alertId} with {"status": "active"}).`,
  ];
  const text = `${lines.join("\n\n")}\n\n-- wallet-alerts\n`;
  const html = page(subject, lines.map((line) => `<p>${escapeHtml(line)}</p>`).join("\n"));
  return { subject, text, html };
}

/**
 * Where an alert sends, for its owner's notice: an email address or a number as given, a
 * webhook URL as scheme, host and path only. Its query string often carries the receiver's
 * token (`?token=…`, a Slack or Splunk key), and a user or password may sit before the host:
 * the notice goes to the token's email claim, which is not always the person who set them.
 */
export function destinationShown(channel: NotificationMethod, destination: string | null): string {
  if (destination === null) return "no destination";
  return channel === "webhook" ? webhookUrlShown(destination) : oneLine(destination);
}

/** The facts as an HTML table, a link's value linked (shared with the digest's email). */
export function factsTable(rows: readonly Row[]): string {
  return `<table cellpadding="4" style="border-collapse:collapse">${rows
    .map(([label, value, href]) => {
      const shown = href === undefined ? escapeHtml(value) : `<a href="${escapeHtml(href)}">${escapeHtml(value)}</a>`;
      return `<tr><th align="left">${escapeHtml(label)}</th><td>${shown}</td></tr>`;
    })
    .join("")}</table>`;
}

export function page(title: string, body: string): string {
  return `<!doctype html>\n<html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head>\n<body style="font-family:sans-serif">\n${body}\n<p style="color:#666">wallet-alerts</p>\n</body></html>\n`;
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
