import { describe, expect, it } from "vitest";
import {
  largeTransferReason,
  riskScoreIncreaseReason,
  suspiciousCounterpartyReason,
  unusualActivityReason,
  type MovementFacts,
} from "../../src/domain/reason.ts";
import type { NotificationPayload } from "../../src/domain/types.ts";
import { destinationShown, emailSubject, renderDisabledNotice, renderEmail, type DisabledNotice } from "../../src/notify/render.ts";
import { GSM7_SEGMENT_SEPTETS, gsm7Length, isGsm7, renderSms } from "../../src/notify/render-sms.ts";

const ADDRESS = "7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU";
const COUNTERPARTY = "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM";

function payload(overrides: Partial<NotificationPayload["data"]> = {}, type: NotificationPayload["type"] = "risk_alert.triggered"): NotificationPayload {
  return {
    type,
    timestamp: "2026-03-01T12:00:00.000Z",
    data: {
      alertId: "alr_01hx0000000000000000000000",
      walletId: "wal_01hx0000000000000000000000",
      address: ADDRESS,
      alias: "Treasury",
      condition: "large_transfer",
      threshold: 10_000,
      observed: 25_000,
      riskScore: 82,
      riskFactors: ["sanctioned_counterparty", "large_outflow"],
      transaction: {
        signature: "5h6xBEauJ3PK6SWCZ1PGjBvj8vDdWG3KpwATGy1ARAXFSDwt8GFXM7W5Ncn16wmqokgpiKRLuS83KUxyZyv2sUYv",
        type: "transfer",
        amount: 25_000,
        token: "USDC",
        from: ADDRESS,
        to: COUNTERPARTY,
        blockTime: 1_772_366_400,
        slot: 300_000_000,
        fee: 0.000005,
        status: "success",
      },
      reason: "Sent 25,000 USDC to 9WzDXw…YtAWWM (threshold 10,000).",
      ...overrides,
    },
  };
}

describe("email rendering", () => {
  it("names the alias, what fired and the reason's news in the subject, so that firings differ", () => {
    expect(emailSubject(payload())).toBe("[Risk alert] Treasury: Large transfer — Sent 25,000 USDC to 9WzDXw…YtAWWM");
    expect(emailSubject(payload({ reason: "Sent 101 SOL to 9WzDXw…YtAWWM (threshold 100)." }))).toBe("[Risk alert] Treasury: Large transfer — Sent 101 SOL to 9WzDXw…YtAWWM");
  });

  it("uses the short address when there is no alias, and marks test notifications", () => {
    expect(emailSubject(payload({ alias: null }, "risk_alert.test"))).toBe("[Risk alert test] large_transfer on 7xKX…gAsU");
  });

  it("keeps the subject on one line whatever the alias holds", () => {
    expect(emailSubject(payload({ alias: "Evil\r\nBcc: x@example.com" }))).toBe("[Risk alert] Evil Bcc: x@example.com: Large transfer — Sent 25,000 USDC to…");
  });

  it("puts the reason and the facts in both the text and the HTML part", () => {
    const email = renderEmail(payload());
    for (const part of [email.text, email.html]) {
      expect(part).toContain("Sent 25,000 USDC to 9WzDXw…YtAWWM (threshold 10,000).");
      expect(part).toContain(ADDRESS);
      expect(part).toContain("82/100");
      expect(part).toContain("sanctioned counterparty, large outflow");
    }
    expect(email.html).toMatch(/^<!doctype html>/);
  });

  it("drops bidi controls and zero-width characters from the alias, so that it cannot reorder or hide the text after it", () => {
    // U+202E (right-to-left override) would show the address after the alias reversed; U+200B hides inside a word.
    const email = renderEmail(payload({ alias: "Cold \u202ewal\u200blet\u2066" }));
    expect(email.subject).toBe("[Risk alert] Cold wallet: Large transfer — Sent 25,000 USDC to 9WzDXw…YtAWWM");
    expect(email.text).toContain(`Wallet:       Cold wallet (${ADDRESS})\n`);
    expect(email.html).toContain(`<td>Cold wallet (${ADDRESS})</td>`);
  });

  it("keeps the alias on one line whatever control characters it holds (NEL, vertical tab, escape)", () => {
    expect(emailSubject(payload({ alias: "Line\u0085Two\u000bThree\u001b[31m" }))).toBe("[Risk alert] Line Two Three [31m: Large transfer — Sent 25,000 USDC to…");
  });

  it("keeps each fact on its line when an ingested token symbol holds line breaks", () => {
    // A token symbol is whatever the ingest API was given (1–64 characters); the reason repeats it.
    const forged = payload({
      reason: "Sent 25,000 USDC\r\nAll clear from 9WzDXw…YtAWWM (threshold 10,000).",
      transaction: { ...payload().data.transaction!, token: "USDC\r\n\r\nRisk factors: none\r\n" },
    });
    const email = renderEmail(forged);
    expect(email.text.split("\n").filter((line) => line.startsWith("Risk factors:"))).toEqual(["Risk factors: sanctioned counterparty, large outflow"]);
    // The row does not repeat a symbol that is no plain name (tokenShown).
    expect(email.text).toContain(`Movement:     25,000 (unlisted) from ${ADDRESS}`);
    expect(email.text).toContain("Sent 25,000 USDC All clear from 9WzDXw…YtAWWM (threshold 10,000).\n");
    expect(email.html).toContain("<strong>Sent 25,000 USDC All clear from");
    expect(renderSms(forged)).toBe("Risk alert on Treasury: Large transfer. Sent 25,000 USDC All clear from 9WzDXw...YtAWWM (threshold 10,000). Wallet risk 82/100.");
  });

  it("names a token by its mint, not by the symbol it gave itself, and shows the mint in full", () => {
    const fakeMint = "Ejv8hcsDVq1k2gTkgLsUV4KC3CaTNEAZmpMNv9L6dKPy";
    const fake = renderEmail(
      payload({ transaction: { ...payload().data.transaction!, token: "USDC", mint: fakeMint }, reason: "Sent 25,000 Ejv8…dKPy to 9WzDXw…YtAWWM (threshold 10,000)." }),
    );
    expect(fake.text).toContain(`Movement:     25,000 Ejv8…dKPy from ${ADDRESS}`);
    expect(fake.text).toContain(`Mint:         ${fakeMint}\n`);
    expect(fake.text).toContain("Threshold:    10,000 Ejv8…dKPy\n");
    expect(fake.text).not.toMatch(/\d USDC/);
    const native = renderEmail(payload({ transaction: { ...payload().data.transaction!, token: "SOL", mint: null } }));
    expect(native.text).toContain("Mint:         none (native SOL)\n");
  });

  it("drops every character a reader ignores: soft hyphens, tag characters, variation selectors, fillers", () => {
    const hidden = renderEmail(payload({ alias: "Tre\u00adas\u{e0020}ury\ufe0f\u3164\u034f" }));
    expect(emailSubject(payload({ alias: "Tre\u00adas\u{e0020}ury\ufe0f\u3164\u034f" }))).toBe("[Risk alert] Treasury: Large transfer — Sent 25,000 USDC to 9WzDXw…YtAWWM");
    expect(hidden.text).toContain("Wallet:       Treasury (");
  });

  it("states the threshold and the observed value in the condition's unit", () => {
    const rows = (data: Partial<NotificationPayload["data"]>) =>
      renderEmail(payload(data)).text.split("\n").filter((line) => /^(Threshold|Observed):/.test(line));
    expect(rows({})).toEqual(["Threshold:    10,000 USDC", "Observed:     25,000 USDC"]);
    expect(rows({ condition: "suspicious_counterparty", threshold: 75, observed: 95 })).toEqual(["Threshold:    risk 75/100", "Observed:     risk 95/100"]);
    expect(rows({ condition: "unusual_activity", threshold: 5, observed: 6 })).toEqual([
      "Threshold:          5× the hourly baseline",
      "Observed:           6× the hourly baseline",
    ]);
    expect(rows({ condition: "risk_score_increase", threshold: 1, observed: 25, transaction: undefined })).toEqual(["Threshold:    1 point", "Observed:     25 points"]);
    // A test has no transaction to take the token from, and nothing observed.
    expect(rows({ observed: null, transaction: undefined })).toEqual(["Threshold:    10,000 (in the transferred token)", "Observed:     —"]);
  });

  it("states a test's threshold in its alert's token filter, named as a person reads it", () => {
    const threshold = (token: string | undefined) =>
      renderEmail(payload({ observed: null, transaction: undefined, ...(token === undefined ? {} : { token }) }, "risk_alert.test"))
        .text.split("\n")
        .find((line) => line.startsWith("Threshold:"));
    expect(threshold("USDC")).toBe("Threshold:    10,000 USDC");
    expect(threshold("usdc")).toBe("Threshold:    10,000 USDC");
    expect(threshold("EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v")).toBe("Threshold:    10,000 USDC");
    expect(threshold("Ejv8hcsDVq1k2gTkgLsUV4KC3CaTNEAZmpMNv9L6dKPy")).toBe("Threshold:    10,000 Ejv8…dKPy");
    expect(threshold("MyToken")).toBe("Threshold:    10,000 MyToken");
    // No filter: any token's units.
    expect(threshold(undefined)).toBe("Threshold:    10,000 (in the transferred token)");
  });

  it("keeps a subject within 78 characters: a long alias gives way first, then the news at a word", () => {
    const long = emailSubject(payload({ alias: "Operations hot wallet for the Frankfurt desk, EUR settlement #47" }));
    expect(long).toBe("[Risk alert] Operations hot wallet f…: Large transfer — Sent 25,000 USDC to…");
    const reason = "Received 123,456,789.12345679 DezX…B263 from 9WzDXw…YtAWWM in an NFT trade (threshold 100,000,000.5).";
    const cut = emailSubject(payload({ alias: "Fund hot wallet", reason }));
    expect(cut).toBe("[Risk alert] Fund hot wallet: Large transfer — Received 123,456,789.12345679…");
    expect([...cut].length).toBeLessThanOrEqual(78);
    // A token the reason names "(unlisted)" is part of the news, not its end.
    expect(emailSubject(payload({ reason: "Sent 5 (unlisted) to 9WzDXw…YtAWWM (threshold 1)." }))).toBe("[Risk alert] Treasury: Large transfer — Sent 5 (unlisted) to 9WzDXw…YtAWWM");
  });

  it("says an unusual_activity's multiple is of its baseline, with the counts, and that its transaction is only the latest", () => {
    // Until 2026-11-28 the Observed row read "5× the usual hourly count" below a reason that said the floor of 1 per hour.
    const email = renderEmail(
      payload({
        condition: "unusual_activity",
        threshold: 5,
        observed: 5,
        activity: { count: 5, baselinePerHour: 1 },
        reason: unusualActivityReason({ count: 5, usualPerHour: 0, baseline: 1, hourTo: 1_772_366_400 }, 5, 5),
      }),
    );
    expect(email.text).toContain("Observed:           5× the hourly baseline (5 transactions in the hour, baseline 1 per hour)\n");
    expect(email.text).toContain("Latest transaction: 5h6x");
    expect(email.text).toContain("Latest movement:    25,000 USDC from");
    expect(email.text).not.toContain("usual hourly count");
  });

  it("shows the counterparty in full, and links the transaction on the explorer when one is set", () => {
    const explorerTxUrl = "https://solscan.io/tx/{signature}";
    const { text, html } = renderEmail(payload(), { explorerTxUrl });
    const signature = payload().data.transaction!.signature;
    expect(text).toContain(`Counterparty: ${COUNTERPARTY}\n`);
    expect(text).toContain(`Explorer:     https://solscan.io/tx/${signature}\n`);
    expect(html).toContain(`<th align="left">Explorer</th><td><a href="https://solscan.io/tx/${signature}">https://solscan.io/tx/${signature}</a></td>`);
    // Received: the counterparty is the sender.
    const received = payload({ transaction: { ...payload().data.transaction!, from: COUNTERPARTY, to: ADDRESS } });
    expect(renderEmail(received).text).toContain(`Counterparty: ${COUNTERPARTY}\n`);
    // No template (EXPLORER_TX_URL empty): no link.
    expect(renderEmail(payload()).text).not.toContain("Explorer:");
    // A self-transfer has no counterparty row.
    expect(renderEmail(payload({ transaction: { ...payload().data.transaction!, to: ADDRESS } })).text).not.toContain("Counterparty:");
  });

  it("says when a firing was detected, and when a test was requested, in UTC and saying so", () => {
    // Until 2026-11-28 "2026-03-01T12:00:00.000Z", whose zone is one letter at the end.
    expect(renderEmail(payload()).text).toContain("Detected at:  2026-03-01 12:00:00 UTC\n");
    expect(renderEmail(payload({}, "risk_alert.test")).text).toContain("Requested at: 2026-03-01 12:00:00 UTC\n");
    expect(renderEmail(payload()).text).not.toMatch(/^Time:/m);
  });

  it("gives the transaction's block time in UTC, saying so", () => {
    const evaluatedLate = payload();
    evaluatedLate.data.transaction!.blockTime = Date.parse("2026-03-01T06:00:05.000Z") / 1000;
    const email = renderEmail(evaluatedLate);
    expect(email.text).toContain("Block time:   2026-03-01 06:00:05 UTC\n");
    expect(email.html).toContain("<td>2026-03-01 06:00:05 UTC</td>");
  });

  it("links the wallet's and the counterparty's explorer pages beside the transaction's, when the deployment sets one", () => {
    const links = { explorerTxUrl: "https://solscan.io/tx/{signature}", explorerAddressUrl: "https://solscan.io/account/{address}" };
    const { text, html } = renderEmail(payload(), links);
    expect(text).toMatch(new RegExp(`^Counterparty page: +https://solscan\\.io/account/${COUNTERPARTY}$`, "m"));
    expect(text).toMatch(new RegExp(`^Wallet page: +https://solscan\\.io/account/${ADDRESS}$`, "m"));
    expect(text).toMatch(new RegExp(`^Explorer: +https://solscan\\.io/tx/${payload().data.transaction!.signature}$`, "m"));
    for (const address of [COUNTERPARTY, ADDRESS]) {
      expect(html).toContain(`<a href="https://solscan.io/account/${address}">https://solscan.io/account/${address}</a>`);
    }
    // Received: the counterparty's page is the sender's.
    const received = payload({ transaction: { ...payload().data.transaction!, from: COUNTERPARTY, to: ADDRESS } });
    expect(renderEmail(received, links).text).toMatch(new RegExp(`^Counterparty page: +https://solscan\\.io/account/${COUNTERPARTY}$`, "m"));
    // A score rise has no transaction: the wallet's page alone.
    const rise = payload({ condition: "risk_score_increase", transaction: undefined, reason: "Risk score rose 25 points, from 20 to 45 (threshold 10)." });
    expect(renderEmail(rise, links).text).toMatch(new RegExp(`^Wallet page: +https://solscan\\.io/account/${ADDRESS}$`, "m"));
    expect(renderEmail(rise, links).text).not.toContain("Counterparty page");
    // A self-transfer has no other side to link.
    expect(renderEmail(payload({ transaction: { ...payload().data.transaction!, to: ADDRESS } }), links).text).not.toContain("Counterparty page");
    // No template (EXPLORER_ADDRESS_URL empty): no address links.
    expect(renderEmail(payload(), { explorerTxUrl: links.explorerTxUrl }).text).not.toMatch(/page:/);
  });

  it("escapes an address link's template in the HTML part, and puts the address in it URL-encoded", () => {
    const { html } = renderEmail(payload(), { explorerAddressUrl: "https://explorer.example/a/{address}?x=1&y=\"2\"" });
    expect(html).toContain(`<a href="https://explorer.example/a/${ADDRESS}?x=1&#38;y=&#34;2&#34;">`);
  });

  it("escapes HTML in caller-controlled text", () => {
    const email = renderEmail(payload({ alias: "<script>alert(1)</script>" }));
    expect(email.html).not.toContain("<script>");
    expect(email.html).toContain("&#60;script&#62;");
  });

  it("says so in the body of a test notification", () => {
    expect(renderEmail(payload({}, "risk_alert.test")).text).toContain("This is a test notification");
  });

  const notice = (overrides: Partial<DisabledNotice> = {}) =>
    renderDisabledNotice({
      alertId: "alr_01m8gb3vr60zndvxs7g116whgy",
      condition: "large_transfer",
      walletName: "Treasury",
      address: ADDRESS,
      reason: "the webhook endpoint answered 410 Gone",
      channel: "webhook",
      destination: "https://hooks.example.com/risk/desk-a",
      ...overrides,
    });

  it("renders the disabled-alert notice with the way back, the alert's id filled in", () => {
    const { subject, text, html } = notice();
    expect(subject).toBe("[Risk alert disabled] large_transfer on Treasury");
    expect(text).toContain("410 Gone");
    expect(text).toContain('(PATCH /v1/risk/alerts/alr_01m8gb3vr60zndvxs7g116whgy with {"status": "active"})');
    expect(text).not.toContain("{id}");
    expect(html).toContain("PATCH /v1/risk/alerts/alr_01m8gb3vr60zndvxs7g116whgy with");
  });

  it("names the wallet's address and the channel and destination that failed", () => {
    expect(notice().text).toContain(
      `Your large_transfer alert alr_01m8gb3vr60zndvxs7g116whgy on Treasury (${ADDRESS}) has been disabled: the webhook endpoint answered 410 Gone.`,
    );
    expect(notice().text).toContain("Its notifications go by webhook to https://hooks.example.com/risk/desk-a.");
    expect(notice({ channel: "email", destination: "desk@fund.example" }).text).toContain("Its notifications go by email to desk@fund.example.");
    expect(notice({ channel: "sms", destination: "+14155550123" }).text).toContain("Its notifications go by sms to +14155550123.");
  });

  it("names a webhook by scheme, host and path only: never its credentials, query string or fragment", () => {
    const text = notice({ destination: "https://user:s3cret@hooks.example.com:8443/risk/desk-a?token=abc123&x=1#frag" }).text;
    expect(text).toContain("Its notifications go by webhook to https://hooks.example.com:8443/risk/desk-a.");
    for (const secret of ["user", "s3cret", "token", "abc123", "frag"]) expect(text).not.toContain(secret);
    expect(destinationShown("webhook", "not a url")).toBe("a URL that cannot be read");
  });
});

describe("email: a late one says how late, by the SMS's rule", () => {
  const smsNote = (sms: string) => /^Risk alert(?: test)?( \([^)]*\))? on /.exec(sms)?.[1] ?? "";
  const subjectNote = (subject: string) => /^\[Risk alert(?: test)?( \([^)]*\))?\] /.exec(subject)?.[1] ?? "";

  it("marks the subject and the first line of an email sent more than 10 minutes after its transaction, and nothing sooner", () => {
    // payload()'s block time and timestamp are 2026-03-01T12:00:00.000Z.
    const late = renderEmail(payload(), {}, new Date("2026-03-01T15:05:00.000Z"));
    // The note kept whole, the news cut at a word to keep the subject within 78 characters.
    expect(late.subject).toBe("[Risk alert (3h ago)] Treasury: Large transfer — Sent 25,000 USDC to…");
    expect(late.text.split("\n")[0]).toBe("Sent late: this happened 3h ago, at 2026-03-01 12:00:00 UTC.");
    expect(late.text.split("\n")[1]).toBe("Sent 25,000 USDC to 9WzDXw…YtAWWM (threshold 10,000).");
    expect(late.html).toContain("<p><strong>Sent late: this happened 3h ago, at 2026-03-01 12:00:00 UTC.</strong></p>");
    const onTime = renderEmail(payload(), {}, new Date("2026-03-01T12:10:00.000Z"));
    expect(onTime.subject).toBe("[Risk alert] Treasury: Large transfer — Sent 25,000 USDC to 9WzDXw…YtAWWM");
    expect(onTime.text.split("\n")[0]).toBe("Sent 25,000 USDC to 9WzDXw…YtAWWM (threshold 10,000).");
    expect(onTime.html).not.toContain("Sent late");
    expect(renderEmail(payload({}, "risk_alert.test"), {}, new Date("2026-03-01T15:05:00.000Z")).subject).toBe("[Risk alert test (3h ago)] large_transfer on Treasury");
  });

  it("says the same lateness as the SMS of the same notification at every attempt time, measured from the block time", () => {
    const evaluatedLate = payload();
    evaluatedLate.data.transaction!.blockTime = Date.parse("2026-03-01T06:00:00.000Z") / 1000;
    const scoreChange = payload({ condition: "risk_score_increase", transaction: undefined, reason: "Risk score rose 25 points, from 20 to 45 (threshold 10)." });
    const attempts = ["2026-03-01T12:05:00.000Z", "2026-03-01T12:10:01.000Z", "2026-03-01T12:59:59.000Z", "2026-03-01T15:05:00.000Z", "2026-03-04T12:10:00.000Z"];
    const notes = [payload(), evaluatedLate, scoreChange, payload({}, "risk_alert.test")].flatMap((sample) =>
      attempts.map((at) => {
        const attemptAt = new Date(at);
        expect(subjectNote(emailSubject(sample, attemptAt)), at).toBe(smsNote(renderSms(sample, attemptAt)));
        return subjectNote(emailSubject(sample, attemptAt));
      }),
    );
    expect(notes).toEqual([
      ...["", " (10 min ago)", " (59 min ago)", " (3h ago)", " (3d ago)"],
      ...[" (6h ago)", " (6h ago)", " (6h ago)", " (9h ago)", " (3d ago)"],
      ...["", " (10 min ago)", " (59 min ago)", " (3h ago)", " (3d ago)"],
      ...["", " (10 min ago)", " (59 min ago)", " (3h ago)", " (3d ago)"],
    ]);
  });

  it("keeps a late subject within 78 characters, the note kept whole", () => {
    const subject = emailSubject(payload({ alias: "Operations hot wallet for the Frankfurt desk" }), new Date("2026-03-04T12:10:00.000Z"));
    expect([...subject].length).toBeLessThanOrEqual(78);
    expect(subject).toBe("[Risk alert (3d ago)] Operations hot wallet f…: Large transfer — Sent 25,000…");
  });
});

describe("email subject: what fired comes first, so that no two conditions of one transaction share a subject", () => {
  const OFAC = { address: COUNTERPARTY, risk: 100, labels: [{ category: "sanctioned" as const, score: 100, source: "OFAC SDN" }] };
  const sent = { direction: "sent", failed: false, amount: 2_000, token: "SOL", counterparty: COUNTERPARTY, type: "transfer" } as const;
  const tx2000 = { ...payload().data.transaction!, amount: 2_000, token: "SOL", mint: null };
  /** The conditions one 2,000 SOL send to an OFAC-listed address fires, each as the pipeline builds it (reasons from domain/reason.ts). */
  const firings = (alias: string | null, movement: typeof sent | MovementFacts = sent) => [
    payload({ alias, threshold: 1_000, observed: movement.amount, transaction: tx2000, direction: "sent", counterparty: OFAC, reason: largeTransferReason(movement, 1_000, "sanctioned") }),
    payload({
      alias,
      condition: "suspicious_counterparty",
      threshold: 75,
      observed: 100,
      transaction: tx2000,
      direction: "sent",
      counterparty: OFAC,
      reason: suspiciousCounterpartyReason(movement, 100, "sanctioned", 75),
    }),
    payload({
      alias,
      condition: "unusual_activity",
      threshold: 5,
      observed: 5,
      transaction: tx2000,
      direction: "sent",
      counterparty: OFAC,
      activity: { count: 5, baselinePerHour: 1 },
      reason: unusualActivityReason({ count: 5, usualPerHour: 0, baseline: 1, hourTo: 1_772_366_400 }, 5, 5),
    }),
  ];

  it("leads a sanctions hit with the label, and a large transfer of the same transaction with its condition and the label", () => {
    // Until 2026-11-28 both read "[Risk alert] Treasury: Sent 2,000 SOL to 9WzDXw…YtAWWM", and mail clients threaded them together.
    const [large, suspicious, busy] = firings("Treasury").map((firing) => emailSubject(firing));
    expect(suspicious).toBe("[Risk alert] Treasury: SANCTIONED counterparty — Sent 2,000 SOL to…");
    expect(large).toBe("[Risk alert] Treasury: Large transfer to SANCTIONED — Sent 2,000 SOL to…");
    expect(busy).toBe("[Risk alert] Treasury: Unusual activity — 5 transactions in the last hour, 5×…");
  });

  it.each([
    { case: "an alias", alias: "Treasury", movement: sent },
    { case: "no alias", alias: null, movement: sent },
    { case: "a 64-character alias", alias: "Operations hot wallet for the Frankfurt desk, EUR settlement #47", movement: sent },
    {
      case: "a 64-character alias and a 17-digit amount of a mint, failed, in an NFT trade",
      alias: "Operations hot wallet for the Frankfurt desk, EUR settlement #47",
      movement: { ...sent, direction: "received", failed: true, amount: 12_345_678.912345678, token: "DezX…B263", type: "nft" } as MovementFacts,
    },
  ])("never gives two conditions of one transaction one subject, with $case", ({ alias, movement }) => {
    const subjects = firings(alias, movement).map((firing) => emailSubject(firing));
    expect(new Set(subjects).size).toBe(subjects.length);
    for (const subject of subjects) expect([...subject].length).toBeLessThanOrEqual(78);
    expect(subjects[0]).toMatch(/: Large transfer to SANCTIONED( — |$)/);
    expect(subjects[1]).toMatch(/: SANCTIONED counterparty( — |$)/);
  });

  it("names the label of a large transfer in either direction, and a suspicious_counterparty crossed by the other side's own score by its risk", () => {
    const exchange = { address: COUNTERPARTY, risk: 10, labels: [{ category: "exchange" as const, score: 10, source: null }] };
    expect(emailSubject(payload({ direction: "received", counterparty: exchange, reason: "Received 25,000 USDC from 9WzDXw…YtAWWM (exchange, threshold 10,000)." }))).toBe(
      "[Risk alert] Treasury: Large transfer from EXCHANGE — Received 25,000 USDC…",
    );
    // Its own score (90) crossed the threshold, not its label: the label does not lead.
    const scored = { address: COUNTERPARTY, risk: 90, labels: [{ category: "exchange" as const, score: 10, source: null }] };
    expect(
      emailSubject(payload({ condition: "suspicious_counterparty", counterparty: scored, reason: "Sent 25,000 USDC to 9WzDXw…YtAWWM (risk 90, threshold 75)." })),
    ).toBe("[Risk alert] Treasury: Suspicious counterparty, risk 90 — Sent 25,000 USDC to…");
  });

  it("keeps a score rise's cause", () => {
    const reason = riskScoreIncreaseReason(60, 96, 10, ["sanctioned_counterparty", "mixer_interaction"]);
    const subject = emailSubject(payload({ condition: "risk_score_increase", transaction: undefined, previousScore: 60, reason }));
    expect(subject).toBe("[Risk alert] Treasury: Risk score 60 → 96: sanctioned counterparty, mixer…");
    expect(emailSubject(payload({ condition: "risk_score_increase", alias: "Hot wallet", transaction: undefined, reason: riskScoreIncreaseReason(0, 90, 10, ["sanctioned_counterparty"]) }))).toBe(
      "[Risk alert] Hot wallet: Risk score 0 → 90: sanctioned counterparty",
    );
  });
});

describe("SMS rendering", () => {
  it("fits one GSM-7 segment: the wallet, what fired, the reason, then the wallet's score; our ellipsis as three dots", () => {
    const sms = renderSms(payload());
    expect(isGsm7(sms)).toBe(true);
    expect(gsm7Length(sms)).toBeLessThanOrEqual(GSM7_SEGMENT_SEPTETS);
    expect(sms).toBe("Risk alert on Treasury: Large transfer. Sent 25,000 USDC to 9WzDXw...YtAWWM (threshold 10,000). Wallet risk 82/100.");
  });

  it("says whose score it gives: a bare '(risk 0/100)' beside a transfer read as a verdict on the transfer", () => {
    const sms = renderSms(payload({ riskScore: 0 }));
    expect(sms).toContain(" Wallet risk 0/100.");
    expect(sms).not.toMatch(/\(risk \d+\/100\)/);
  });

  it("cuts a long message to 160 septets with '...'", () => {
    const sms = renderSms(payload({ reason: `${"Risk score rose 25 points: ".repeat(10)}end.` }));
    expect(isGsm7(sms)).toBe(true);
    expect(gsm7Length(sms)).toBeLessThanOrEqual(GSM7_SEGMENT_SEPTETS);
    // Whole words only: the cut drops "points:" rather than show "poi...".
    expect(gsm7Length(sms)).toBeGreaterThan(GSM7_SEGMENT_SEPTETS - 10);
    expect(sms.endsWith("...")).toBe(true);
  });

  it("counts GSM-7 extension characters as two septets when cutting", () => {
    const sms = renderSms(payload({ reason: "€".repeat(200) }));
    expect(isGsm7(sms)).toBe(true);
    expect(gsm7Length(sms)).toBeLessThanOrEqual(GSM7_SEGMENT_SEPTETS);
  });

  it("spells any other character GSM-7 cannot as '?', keeping the 160-septet segment rather than a 70-unit UCS-2 one", () => {
    // A reason written before tokens.ts named such symbols "(unlisted)"; until 2026-11-28 it made the SMS UCS-2, cut after the amount.
    const sms = renderSms(payload({ reason: "Sent 25,000 🐶 to 9WzDXw…YtAWWM (threshold 10,000)." }));
    expect(sms).toBe("Risk alert on Treasury: Large transfer. Sent 25,000 ? to 9WzDXw...YtAWWM (threshold 10,000). Wallet risk 82/100.");
    expect(isGsm7(sms)).toBe(true);
  });

  it.each([
    { alias: "Tesorería", shown: "Tesoreria" },
    { alias: "Skarbiec Łódź", shown: "Skarbiec Lodz" },
    { alias: "Café Zürich", shown: "Café Zürich" }, // é and ü are GSM-7's own
    { alias: "Treasury 🏦 cold", shown: "Treasury cold" },
    { alias: "🏦 Treasury", shown: "Treasury" },
  ])("keeps an alias GSM-7 can nearly spell: $alias as $shown", ({ alias, shown }) => {
    // Until 2026-11-28 any of these gave way to the short address 7xKX...gAsU.
    const sms = renderSms(payload({ alias }));
    expect(sms.startsWith(`Risk alert on ${shown}: Large transfer. `)).toBe(true);
    expect(isGsm7(sms)).toBe(true);
  });

  it.each(["Казна 🏦", "خزينة الشركة", "東京 desk", "Ταμείο"])("names the wallet by its short address when its alias has letters GSM-7 cannot spell: %s", (alias) => {
    const sms = renderSms(payload({ alias }));
    expect(sms.startsWith("Risk alert on 7xKX...gAsU: Large transfer. ")).toBe(true);
    expect(isGsm7(sms)).toBe(true);
  });

  it("marks a test notification", () => {
    expect(renderSms(payload({}, "risk_alert.test"))).toBe("Risk alert test on Treasury: Large transfer. Sent on request to check that this channel works. Wallet risk 82/100.");
  });

  it("keeps a test notification for a wallet with a non-GSM-7 alias whole in one GSM-7 segment", () => {
    // The test's reason names the wallet by its alias, which the SMS leaves out for the short address.
    const sms = renderSms(payload({ alias: "Казна 🏦", observed: null, reason: "Test notification for your large_transfer alert on Казна 🏦." }, "risk_alert.test"));
    expect(sms).toBe("Risk alert test on 7xKX...gAsU: Large transfer. Sent on request to check that this channel works. Wallet risk 82/100.");
  });
});

describe("SMS rendering: the decisive facts survive a long alias, a long amount and a late send", () => {
  const OFAC = { address: COUNTERPARTY, risk: 100, labels: [{ category: "sanctioned" as const, score: 100, source: "OFAC SDN" }] };
  const ALIAS_64 = "Operations hot wallet for the Frankfurt desk, EUR settlement #47";
  const LATE = new Date("2026-03-01T15:05:00.000Z");
  const base: MovementFacts = { direction: "received", failed: false, amount: 2_000, token: "SOL", counterparty: COUNTERPARTY, type: "transfer" };
  /** A suspicious_counterparty firing on a transaction with the OFAC-listed COUNTERPARTY, as the pipeline builds it. */
  const sanctionsHit = (movement: MovementFacts, alias: string | null) =>
    payload({
      alias,
      condition: "suspicious_counterparty",
      threshold: 75,
      observed: 100,
      riskScore: 90,
      direction: movement.direction,
      counterparty: OFAC,
      reason: suspiciousCounterpartyReason(movement, 100, "sanctioned", 75),
    });
  const shapes: Array<{ shape: string; movement: MovementFacts; amount: string }> = [
    { shape: "a plain receipt", movement: base, amount: "2,000 SOL" },
    { shape: "a failed receipt", movement: { ...base, failed: true }, amount: "2,000 SOL" },
    { shape: "an NFT trade", movement: { ...base, type: "nft" }, amount: "2,000 SOL" },
    { shape: "a swap of a 17-digit amount", movement: { ...base, amount: 1_234_567.8912345679, token: "JitoSOL", type: "swap" }, amount: "1,234,567.8912345679 JitoSOL" },
    {
      shape: "a failed NFT trade of a 17-digit amount of a mint",
      movement: { ...base, failed: true, amount: 12_345_678.912345678, token: "DezX…B263", type: "nft" },
      amount: "12,345,678.912345678 DezX...B263",
    },
    { shape: "sanctioned dust", movement: { ...base, amount: 0.0001 }, amount: "0.0001 SOL" },
  ];
  const cases = shapes.flatMap((shape) =>
    [
      { alias: "Treasury", late: undefined, name: "Treasury" },
      { alias: "Treasury", late: LATE, name: "Treasury" },
      { alias: null, late: LATE, name: "7xKX...gAsU" },
      { alias: ALIAS_64, late: LATE, name: "Operations h" },
    ].map((how) => ({ ...shape, ...how, when: `${shape.shape}, alias ${how.alias === null ? "none" : how.alias.length}${how.late ? ", 3h late" : ""}` })),
  );

  it.each(cases)("a sanctions hit keeps the wallet, SANCTIONED, the amount and token, and the direction: $when", ({ movement, alias, late, name, amount }) => {
    // Until 2026-11-28 the label came last and was cut first, and a wallet "Treasury" became "7xKX...gAsU".
    const sms = renderSms(sanctionsHit(movement, alias), late);
    expect(sms.startsWith(`Risk alert${late ? " (3h ago)" : ""} on ${name}`)).toBe(true);
    expect(sms).toContain(": SANCTIONED counterparty. ");
    expect(sms).toContain(` ${amount} `);
    expect(sms).toMatch(movement.failed ? / Tried to receive / : / Received /);
    if (alias !== null) expect(sms).not.toContain("7xKX...gAsU");
    expect(isGsm7(sms)).toBe(true);
    expect(gsm7Length(sms)).toBeLessThanOrEqual(GSM7_SEGMENT_SEPTETS);
  });

  it("leaves out the detail first, then the wallet's score, then the tail of a long alias, then the reason from its end", () => {
    const movement: MovementFacts = { ...base, failed: true, amount: 12_345_678.912345678, token: "JitoSOL", type: "nft" };
    expect(renderSms(sanctionsHit(base, "Treasury"))).toBe(
      "Risk alert on Treasury: SANCTIONED counterparty. Received 2,000 SOL from 9WzDXw...YtAWWM (sanctioned, risk 100, threshold 75). Wallet risk 90/100.",
    );
    expect(renderSms(sanctionsHit({ ...base, type: "nft" }, "Treasury"))).toBe(
      "Risk alert on Treasury: SANCTIONED counterparty. Received 2,000 SOL from 9WzDXw...YtAWWM in an NFT trade. Wallet risk 90/100.",
    );
    expect(renderSms(sanctionsHit(movement, "Treasury"))).toBe(
      "Risk alert on Treasury: SANCTIONED counterparty. Tried to receive 12,345,678.912345678 JitoSOL from 9WzDXw...YtAWWM in an NFT trade. Wallet risk 90/100.",
    );
    expect(renderSms(sanctionsHit(movement, "Treasury"), LATE)).toBe(
      "Risk alert (3h ago) on Treasury: SANCTIONED counterparty. Tried to receive 12,345,678.912345678 JitoSOL from 9WzDXw...YtAWWM in an NFT trade.",
    );
    expect(renderSms(sanctionsHit(movement, "Treasury desk, Frankfurt am Main"), LATE)).toBe(
      "Risk alert (3h ago) on Treasury desk, Frankfurt...: SANCTIONED counterparty. Tried to receive 12,345,678.912345678 JitoSOL from 9WzDXw...YtAWWM in an NFT trade.",
    );
    expect(renderSms(sanctionsHit(movement, ALIAS_64), LATE)).toBe(
      "Risk alert (3h ago) on Operations hot wallet fo...: SANCTIONED counterparty. Tried to receive 12,345,678.912345678 JitoSOL from 9WzDXw...YtAWWM in an NFT trade.",
    );
    const legs: MovementFacts = { ...movement, token: "DezX…B263", legs: { count: 40, otherCounterparties: 12 } };
    expect(renderSms(sanctionsHit(legs, ALIAS_64), LATE)).toBe(
      "Risk alert (3h ago) on Operation...: SANCTIONED counterparty. Tried to receive 12,345,678.912345678 DezX...B263 from 9WzDXw...YtAWWM and 12 others in 40...",
    );
  });

  it("names the label of a large transfer's other side in its SMS, whichever alert fired", () => {
    const sms = renderSms(
      payload({ threshold: 1_000, observed: 2_000, direction: "received", counterparty: OFAC, reason: largeTransferReason(base, 1_000, "sanctioned") }),
    );
    expect(sms).toBe("Risk alert on Treasury: Large transfer from SANCTIONED. Received 2,000 SOL from 9WzDXw...YtAWWM (sanctioned, threshold 1,000). Wallet risk 82/100.");
  });

  it("names a counterparty risky by its own score by that risk", () => {
    const scored = { address: COUNTERPARTY, risk: 90, labels: [] };
    const sms = renderSms(payload({ condition: "suspicious_counterparty", counterparty: scored, reason: suspiciousCounterpartyReason(base, 90, null, 75) }));
    expect(sms).toBe("Risk alert on Treasury: Suspicious counterparty, risk 90. Received 2,000 SOL from 9WzDXw...YtAWWM (risk 90, threshold 75). Wallet risk 82/100.");
  });

  const SYMBOL = "币安人生";
  /** A native-ingest token symbol outside GSM-7, moving 1,250,000. */
  const foreignToken = {
    observed: 1_250_000,
    transaction: { ...payload().data.transaction!, amount: 1_250_000, token: SYMBOL },
  };
  const SENT = `Sent 1,250,000 ${SYMBOL} to 9WzDXw…YtAWWM (threshold 10,000).`;
  const RECEIVED = `Received 1,250,000 ${SYMBOL} from 9WzDXw…YtAWWM (sanctioned, risk 95, threshold 75).`;

  it.each([
    {
      when: "a long alias meets a token symbol outside GSM-7",
      data: { ...foreignToken, alias: "Frankfurt settlement wallet", reason: SENT },
      sms: "Risk alert on Frankfurt settlement wallet: Large transfer. Sent 1,250,000 ???? to 9WzDXw...YtAWWM (threshold 10,000). Wallet risk 82/100.",
    },
    {
      when: "a 64-character alias meets a token symbol outside GSM-7",
      data: { ...foreignToken, alias: ALIAS_64, reason: SENT },
      sms: "Risk alert on Operations hot wallet for the Frankfurt desk, EUR settlement #47: Large transfer. Sent 1,250,000 ???? to 9WzDXw...YtAWWM. Wallet risk 82/100.",
    },
    {
      when: "a Cyrillic alias meets a token symbol outside GSM-7 in a long reason",
      data: { ...foreignToken, alias: "Трежери кошелёк", condition: "suspicious_counterparty" as const, reason: RECEIVED },
      sms: "Risk alert on 7xKX...gAsU: Suspicious counterparty. Received 1,250,000 ???? from 9WzDXw...YtAWWM (sanctioned, risk 95, threshold 75). Wallet risk 82/100.",
    },
    {
      when: "an emoji alias meets a token symbol outside GSM-7 in a long reason",
      data: { ...foreignToken, alias: "🏦 Treasury", condition: "suspicious_counterparty" as const, reason: RECEIVED },
      sms: "Risk alert on Treasury: Suspicious counterparty. Received 1,250,000 ???? from 9WzDXw...YtAWWM (sanctioned, risk 95, threshold 75). Wallet risk 82/100.",
    },
  ])("keeps the amount whole when $when", ({ data, sms: expected }) => {
    const sms = renderSms(payload(data));
    expect(sms).toBe(expected);
    expect(isGsm7(sms)).toBe(true);
    expect(gsm7Length(sms)).toBeLessThanOrEqual(GSM7_SEGMENT_SEPTETS);
  });

  it.each([
    { symbol: SYMBOL, shown: "????" },
    { symbol: "USDС", shown: "USD?" }, // a Cyrillic С: must not read as USDC
    { symbol: "🐶", shown: "?" },
    { symbol: SYMBOL.repeat(16), shown: "????...????" }, // 64 characters, shortened by the reason
  ])("spells a token symbol outside GSM-7 with '?' for each character it cannot, keeping one 160-character segment: $symbol as $shown", ({ symbol, shown }) => {
    const movement = { direction: "sent", failed: false, amount: 1_250_000, token: symbol, counterparty: COUNTERPARTY, type: "transfer" } as const;
    const sms = renderSms(payload({ ...foreignToken, transaction: { ...foreignToken.transaction, token: symbol }, reason: largeTransferReason(movement, 10_000) }));
    expect(sms).toBe(`Risk alert on Treasury: Large transfer. Sent 1,250,000 ${shown} to 9WzDXw...YtAWWM (threshold 10,000). Wallet risk 82/100.`);
    expect(isGsm7(sms)).toBe(true);
  });

  it("drops a number it cannot show whole rather than show part of it", () => {
    const sms = renderSms(payload({ alias: null, reason: `Sent ${"1,250,000 ".repeat(12)}USDC.` }));
    expect(sms).toBe(
      "Risk alert on 7xKX...gAsU: Large transfer. Sent 1,250,000 1,250,000 1,250,000 1,250,000 1,250,000 1,250,000 1,250,000 1,250,000 1,250,000 1,250,000 1,250,000...",
    );
    expect(gsm7Length(sms)).toBeLessThanOrEqual(GSM7_SEGMENT_SEPTETS);
  });

  it("gives a score rise's cause before its threshold, and the score once: its reason gives the new score", () => {
    const sms = renderSms(
      payload({ condition: "risk_score_increase", riskScore: 45, transaction: undefined, reason: "Risk score rose 25 points, from 20 to 45 (threshold 10): sanctioned counterparty." }),
    );
    expect(sms).toBe("Risk alert on Treasury: Risk score rose 25 points, from 20 to 45: sanctioned counterparty (threshold 10).");
  });

  it("says how long ago the alert fired when the SMS goes out more than 10 minutes after it, and nothing sooner", () => {
    // payload().timestamp is 2026-03-01T12:00:00.000Z.
    const rows: Array<[Date | undefined, string]> = [
      [undefined, "Risk alert on Treasury: Large transfer."],
      [new Date("2026-03-01T12:10:00.000Z"), "Risk alert on Treasury: Large transfer."],
      [new Date("2026-03-01T12:10:01.000Z"), "Risk alert (10 min ago) on Treasury: Large transfer."],
      [new Date("2026-03-01T12:59:59.000Z"), "Risk alert (59 min ago) on Treasury: Large transfer."],
      [new Date("2026-03-01T15:05:00.000Z"), "Risk alert (3h ago) on Treasury: Large transfer."],
      [new Date("2026-03-04T12:10:00.000Z"), "Risk alert (3d ago) on Treasury: Large transfer."],
    ];
    for (const [attemptAt, start] of rows) expect(renderSms(payload(), attemptAt).startsWith(start), `${attemptAt?.toISOString()}`).toBe(true);
    expect(renderSms(payload({}, "risk_alert.test"), new Date("2026-03-01T15:05:00.000Z"))).toMatch(/^Risk alert test \(3h ago\) on /);
  });

  it("measures how late from the transaction's block time, not from when its batch was evaluated", () => {
    // A transfer at 06:00, evaluated at 12:00 after an outage, sent at 12:01: six hours old.
    const evaluatedLate = payload();
    evaluatedLate.data.transaction!.blockTime = Date.parse("2026-03-01T06:00:00.000Z") / 1000;
    expect(renderSms(evaluatedLate, new Date("2026-03-01T12:01:00.000Z"))).toMatch(/^Risk alert \(6h ago\) on /);
    // A block time after the timestamp (a skewed clock) does not make the SMS look on time.
    const skewed = payload();
    skewed.data.transaction!.blockTime = Date.parse("2026-03-01T18:00:00.000Z") / 1000;
    expect(renderSms(skewed, new Date("2026-03-01T15:05:00.000Z"))).toMatch(/^Risk alert \(3h ago\) on /);
  });

  it("measures how late a score change is from its notification's timestamp, as it has no transaction", () => {
    const scoreChange = payload({ condition: "risk_score_increase", transaction: undefined, reason: "Risk score rose 25 points, from 20 to 45 (threshold 10)." });
    expect(renderSms(scoreChange, new Date("2026-03-01T12:05:00.000Z"))).toMatch(/^Risk alert on /);
    expect(renderSms(scoreChange, new Date("2026-03-01T14:00:00.000Z"))).toMatch(/^Risk alert \(2h ago\) on /);
  });
});

describe("GSM-7 charset", () => {
  it("accepts the basic and extension tables and rejects the rest", () => {
    expect(isGsm7("Hello @£$¥ ÄÖÑÜ äöñü à {}[]~|€^\\")).toBe(true);
    expect(isGsm7("…")).toBe(false);
    expect(isGsm7("×")).toBe(false);
    expect(isGsm7("ç")).toBe(false); // only the capital Ç is in the table
    expect(gsm7Length("a€")).toBe(3);
  });
});

describe("amounts read exactly in the email and the SMS", () => {
  const BONK = "DezXAZ8z7PnrnRJjz3wXBoRgixCa6xjnB7YaB1pPB263";

  /** A large_transfer notification as the pipeline builds it: the reason from domain/reason.ts. */
  function transfer(amount: number, threshold: number, token: string, more: Partial<NotificationPayload["data"]> = {}, type: "transfer" | "nft" = "transfer") {
    const tx = { ...payload().data.transaction!, amount, token, type };
    const movement = { direction: "sent", failed: false, amount, token, counterparty: COUNTERPARTY, type } as const;
    return payload({ threshold, observed: amount, transaction: tx, reason: largeTransferReason(movement, threshold), ...more });
  }

  it.each([
    { amount: 9_999.996, threshold: 9_999.995, token: "USDC", shown: "9,999.996", limit: "9,999.995" },
    { amount: 0.999999, threshold: 0.5, token: "SOL", shown: "0.999999", limit: "0.5" },
    { amount: 123_456_789.12345679, threshold: 100_000_000.5, token: "USDC", shown: "123,456,789.12345679", limit: "100,000,000.5" },
    { amount: 1.23456789e-7, threshold: 0.000000001, token: "SOL", shown: "0.000000123456789", limit: "0.000000001" },
  ])("email: $shown $token against a threshold of $limit, in the reason, Threshold, Observed and Movement", ({ amount, threshold, token, shown, limit }) => {
    const email = renderEmail(transfer(amount, threshold, token));
    const reason = `Sent ${shown} ${token} to 9WzDXw…YtAWWM (threshold ${limit}).`;
    const rows = email.text.split("\n");
    expect(rows[0]).toBe(reason);
    expect(rows.filter((line) => /^(Threshold|Observed|Movement):/.test(line))).toEqual([
      `Threshold:    ${limit} ${token}`,
      `Observed:     ${shown} ${token}`,
      `Movement:     ${shown} ${token} from ${ADDRESS} to ${COUNTERPARTY} (transfer, success)`,
    ]);
    expect(email.html).toContain(`<strong>${reason}</strong>`);
    expect(email.html).toContain(`<th align="left">Threshold</th><td>${limit} ${token}</td>`);
    expect(email.html).toContain(`<th align="left">Observed</th><td>${shown} ${token}</td>`);
  });

  it("email: states score thresholds as their owner set them, and multiples rounded as the reason rounds them", () => {
    const rows = (data: Partial<NotificationPayload["data"]>) =>
      renderEmail(payload(data)).text.split("\n").filter((line) => /^(Threshold|Observed):/.test(line));
    expect(rows({ condition: "suspicious_counterparty", threshold: 74.995, observed: 75 })).toEqual(["Threshold:    risk 74.995/100", "Observed:     risk 75/100"]);
    expect(rows({ condition: "risk_score_increase", threshold: 9.999, observed: 10, transaction: undefined })).toEqual([
      "Threshold:    9.999 points",
      "Observed:     10 points",
    ]);
    // The multiple reached is computed to 2 decimals: a threshold of 2.554 reads 2.55 like it.
    expect(rows({ condition: "unusual_activity", threshold: 2.554, observed: 2.55 })).toEqual([
      "Threshold:          2.55× the hourly baseline",
      "Observed:           2.55× the hourly baseline",
    ]);
  });

  it("SMS: a transfer just over its threshold reads just over, not 10,000 against 10,000", () => {
    const sms = renderSms(transfer(9_999.996, 9_999.995, "USDC"));
    expect(sms).toBe("Risk alert on Treasury: Large transfer. Sent 9,999.996 USDC to 9WzDXw...YtAWWM (threshold 9,999.995). Wallet risk 82/100.");
    expect(gsm7Length(sms)).toBeLessThanOrEqual(GSM7_SEGMENT_SEPTETS);
  });

  const LATE = new Date("2026-03-01T15:05:00.000Z");
  const ALIAS_64 = "Operations hot wallet for the Frankfurt desk, EUR settlement #47";
  it.each([
    {
      when: "a long amount and threshold fit whole",
      sms: () => renderSms(transfer(123_456_789.12345679, 100_000_000.5, "USDC")),
      text: "Risk alert on Treasury: Large transfer. Sent 123,456,789.12345679 USDC to 9WzDXw...YtAWWM (threshold 100,000,000.5). Wallet risk 82/100.",
    },
    {
      when: "a 64-character alias meets a long amount: the threshold and the wallet's score give way first",
      sms: () => renderSms(transfer(123_456_789.12345679, 100_000_000.5, "USDC", { alias: ALIAS_64 })),
      text: "Risk alert on Operations hot wallet for the Frankfurt desk, EUR settlement #47: Large transfer. Sent 123,456,789.12345679 USDC to 9WzDXw...YtAWWM.",
    },
    {
      when: "a mint, an NFT trade and a late note leave no room for the threshold: it goes whole",
      sms: () => renderSms(transfer(123_456_789.12345679, 100_000_000.12345679, BONK, { alias: null }, "nft"), LATE),
      text: "Risk alert (3h ago) on 7xKX...gAsU: Large transfer. Sent 123,456,789.12345679 DezX...B263 to 9WzDXw...YtAWWM in an NFT trade. Wallet risk 82/100.",
    },
    {
      when: "a counterparty alert on a failed receipt of a long amount of a mint, late",
      sms: () => {
        const movement = { direction: "received", failed: true, amount: 123_456_789.12345679, token: BONK, counterparty: COUNTERPARTY, type: "nft" } as const;
        return renderSms(payload({ alias: null, condition: "suspicious_counterparty", reason: suspiciousCounterpartyReason(movement, 95, "sanctioned", 75) }), LATE);
      },
      text: "Risk alert (3h ago) on 7xKX...gAsU: Suspicious counterparty. Tried to receive 123,456,789.12345679 DezX...B263 from 9WzDXw...YtAWWM in an NFT trade.",
    },
  ])("SMS: one segment, the amount whole, when $when", ({ sms: render, text }) => {
    const sms = render();
    expect(sms).toBe(text);
    expect(isGsm7(sms)).toBe(true);
    expect(gsm7Length(sms)).toBeLessThanOrEqual(GSM7_SEGMENT_SEPTETS);
    expect(sms).toContain(" 123,456,789.12345679 ");
  });
});
