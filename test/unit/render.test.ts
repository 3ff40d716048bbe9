import { describe, expect, it } from "vitest";
import { largeTransferReason, suspiciousCounterpartyReason } from "../../src/domain/reason.ts";
import type { NotificationPayload } from "../../src/domain/types.ts";
import { destinationShown, emailSubject, renderDisabledNotice, renderEmail, type DisabledNotice } from "../../src/notify/render.ts";
import { GSM7_SEGMENT_SEPTETS, UCS2_SEGMENT_UNITS, gsm7Length, isGsm7, renderSms } from "../../src/notify/render-sms.ts";

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
  it("names the alias and the reason's first clause in the subject, so that firings differ", () => {
    expect(emailSubject(payload())).toBe("[Risk alert] Treasury: Sent 25,000 USDC to 9WzDXw…YtAWWM");
    expect(emailSubject(payload({ reason: "Sent 101 SOL to 9WzDXw…YtAWWM (threshold 100)." }))).toBe("[Risk alert] Treasury: Sent 101 SOL to 9WzDXw…YtAWWM");
  });

  it("uses the short address when there is no alias, and marks test notifications", () => {
    expect(emailSubject(payload({ alias: null }, "risk_alert.test"))).toBe("[Risk alert test] large_transfer on 7xKX…gAsU");
  });

  it("keeps the subject on one line whatever the alias holds", () => {
    expect(emailSubject(payload({ alias: "Evil\r\nBcc: x@example.com" }))).toBe("[Risk alert] Evil Bcc: x@example.com: Sent 25,000 USDC to 9WzDXw…YtAWWM");
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
    expect(email.subject).toBe("[Risk alert] Cold wallet: Sent 25,000 USDC to 9WzDXw…YtAWWM");
    expect(email.text).toContain(`Wallet:       Cold wallet (${ADDRESS})\n`);
    expect(email.html).toContain(`<td>Cold wallet (${ADDRESS})</td>`);
  });

  it("keeps the alias on one line whatever control characters it holds (NEL, vertical tab, escape)", () => {
    expect(emailSubject(payload({ alias: "Line\u0085Two\u000bThree\u001b[31m" }))).toBe("[Risk alert] Line Two Three [31m: Sent 25,000 USDC to 9WzDXw…YtAWWM");
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
    expect(renderSms(forged)).toBe("Risk alert: Large transfer on Treasury (risk 82/100). Sent 25,000 USDC All clear from 9WzDXw...YtAWWM (threshold 10,000).");
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
    expect(emailSubject(payload({ alias: "Tre\u00adas\u{e0020}ury\ufe0f\u3164\u034f" }))).toBe("[Risk alert] Treasury: Sent 25,000 USDC to 9WzDXw…YtAWWM");
    expect(hidden.text).toContain("Wallet:       Treasury (");
  });

  it("states the threshold and the observed value in the condition's unit", () => {
    const rows = (data: Partial<NotificationPayload["data"]>) =>
      renderEmail(payload(data)).text.split("\n").filter((line) => /^(Threshold|Observed):/.test(line));
    expect(rows({})).toEqual(["Threshold:    10,000 USDC", "Observed:     25,000 USDC"]);
    expect(rows({ condition: "suspicious_counterparty", threshold: 75, observed: 95 })).toEqual(["Threshold:    risk 75/100", "Observed:     risk 95/100"]);
    expect(rows({ condition: "unusual_activity", threshold: 5, observed: 6 })).toEqual([
      "Threshold:    5× the usual hourly count",
      "Observed:     6× the usual hourly count",
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

  it("keeps a subject within 78 characters: a long alias gives way first, then the clause at a word", () => {
    const long = emailSubject(payload({ alias: "Operations hot wallet for the Frankfurt desk, EUR settlement #47" }));
    expect(long).toBe("[Risk alert] Operations hot wallet f…: Sent 25,000 USDC to 9WzDXw…YtAWWM");
    const reason = "Received 123,456,789.12345679 DezX…B263 from 9WzDXw…YtAWWM in an NFT trade (threshold 100,000,000.5).";
    const cut = emailSubject(payload({ alias: "Fund hot wallet", reason }));
    expect(cut).toBe("[Risk alert] Fund hot wallet: Received 123,456,789.12345679 DezX…B263 from…");
    expect([...cut].length).toBeLessThanOrEqual(78);
    // A token the reason names "(unlisted)" is part of the clause, not its end.
    expect(emailSubject(payload({ reason: "Sent 5 (unlisted) to 9WzDXw…YtAWWM (threshold 1)." }))).toBe("[Risk alert] Treasury: Sent 5 (unlisted) to 9WzDXw…YtAWWM");
    expect(emailSubject(payload({ condition: "risk_score_increase", reason: "Risk score rose 36 points, from 60 to 96 (threshold 10): sanctioned counterparty." }))).toBe(
      "[Risk alert] Treasury: Risk score rose 36 points, from 60 to 96",
    );
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

  it("says when a firing was detected, and when a test was requested", () => {
    expect(renderEmail(payload()).text).toContain("Detected at:  2026-03-01T12:00:00.000Z\n");
    expect(renderEmail(payload({}, "risk_alert.test")).text).toContain("Requested at: 2026-03-01T12:00:00.000Z\n");
    expect(renderEmail(payload()).text).not.toMatch(/^Time:/m);
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

describe("SMS rendering", () => {
  it("fits one GSM-7 segment and spells our ellipsis as three dots", () => {
    const sms = renderSms(payload());
    expect(isGsm7(sms)).toBe(true);
    expect(gsm7Length(sms)).toBeLessThanOrEqual(GSM7_SEGMENT_SEPTETS);
    expect(sms).toBe("Risk alert: Large transfer on Treasury (risk 82/100). Sent 25,000 USDC to 9WzDXw...YtAWWM (threshold 10,000).");
  });

  it("cuts a long message to 160 septets with '...'", () => {
    const sms = renderSms(payload({ reason: `${"Risk score rose 25 points: ".repeat(10)}end.` }));
    expect(isGsm7(sms)).toBe(true);
    expect(gsm7Length(sms)).toBeLessThanOrEqual(GSM7_SEGMENT_SEPTETS);
    expect(gsm7Length(sms)).toBeGreaterThan(GSM7_SEGMENT_SEPTETS - 5);
    expect(sms.endsWith("...")).toBe(true);
  });

  it("counts GSM-7 extension characters as two septets when cutting", () => {
    const sms = renderSms(payload({ reason: "€".repeat(200) }));
    expect(isGsm7(sms)).toBe(true);
    expect(gsm7Length(sms)).toBeLessThanOrEqual(GSM7_SEGMENT_SEPTETS);
  });

  it("names the wallet by its short address when the alias is not GSM-7, keeping the 160-character segment", () => {
    const sms = renderSms(payload({ alias: "Казна 🏦" }));
    expect(sms).toContain("on 7xKX...gAsU (risk 82/100).");
    expect(isGsm7(sms)).toBe(true);
  });

  it("cuts a long alias, not the facts after it, to keep to one segment", () => {
    const sms = renderSms(
      payload({
        alias: "Operations hot wallet for the Frankfurt desk, EUR settlement #4",
        condition: "suspicious_counterparty",
        riskScore: 90,
        reason: "Sent 5 SOL to 9WzDXw…YtAWWM (sanctioned, risk 95, threshold 75).",
      }),
    );
    expect(gsm7Length(sms)).toBeLessThanOrEqual(GSM7_SEGMENT_SEPTETS);
    expect(sms).toBe(
      "Risk alert: Suspicious counterparty on Operations hot wallet for the Frankf... (risk 90/100). Sent 5 SOL to 9WzDXw...YtAWWM (sanctioned, risk 95, threshold 75).",
    );
  });

  it("names the wallet by its short address when the facts leave too little room for the alias", () => {
    const sms = renderSms(payload({ alias: "Operations hot wallet", reason: `${"Risk score rose 25 points: ".repeat(4)}end.` }));
    expect(sms).toMatch(/^Risk alert: Large transfer on 7xKX\.\.\.gAsU \(risk 82\/100\)\. Risk score rose/);
    expect(gsm7Length(sms)).toBeLessThanOrEqual(GSM7_SEGMENT_SEPTETS);
  });

  it("falls back to one UCS-2 segment of 70 units, cut with '…', when the content cannot be GSM-7", () => {
    const sms = renderSms(payload({ reason: "Sent 25,000 🐶 to 9WzDXw…YtAWWM (threshold 10,000)." }));
    expect(isGsm7(sms)).toBe(false);
    expect(sms.length).toBeLessThanOrEqual(UCS2_SEGMENT_UNITS);
    expect(sms.endsWith("…")).toBe(true);
  });

  it("marks a test notification", () => {
    expect(renderSms(payload({}, "risk_alert.test"))).toMatch(/^Risk alert test: /);
  });

  it("keeps a test notification for a wallet with a non-GSM-7 alias whole in one GSM-7 segment", () => {
    // The test's reason names the wallet by its alias, which the SMS leaves out for the short address.
    const sms = renderSms(payload({ alias: "Казна 🏦", observed: null, reason: "Test notification for your large_transfer alert on Казна 🏦." }, "risk_alert.test"));
    expect(sms).toBe("Risk alert test: Large transfer on 7xKX...gAsU (risk 82/100). Sent on request to check that this channel works.");
  });
});

describe("SMS rendering: the facts survive a long alias, a symbol outside GSM-7 and a late send", () => {
  const SYMBOL = "币安人生";
  /** A native-ingest token symbol outside GSM-7, moving 1,250,000. */
  const foreignToken = {
    observed: 1_250_000,
    transaction: { ...payload().data.transaction!, amount: 1_250_000, token: SYMBOL },
  };
  const SENT = `Sent 1,250,000 ${SYMBOL} to 9WzDXw…YtAWWM (threshold 10,000).`;
  const RECEIVED = `Received 1,250,000 ${SYMBOL} from 9WzDXw…YtAWWM (sanctioned, risk 95, threshold 75).`;
  const ALIAS_64 = "Operations hot wallet for the Frankfurt desk, EUR settlement #47";
  /** Text outside GSM-7 that is not the token symbol (no transaction names one): the SMS stays UCS-2. */
  const foreignText = { transaction: undefined };

  /** One segment in the encoding the text needs. */
  function expectOneSegment(sms: string) {
    if (isGsm7(sms)) expect(gsm7Length(sms)).toBeLessThanOrEqual(GSM7_SEGMENT_SEPTETS);
    else expect(sms.length).toBeLessThanOrEqual(UCS2_SEGMENT_UNITS);
  }

  it.each([
    {
      when: "a long alias meets a token symbol outside GSM-7",
      data: { ...foreignToken, alias: "Frankfurt settlement wallet", reason: SENT },
      sms: "Risk alert: Large transfer on Frankfurt settlement wallet (risk 82/100). Sent 1,250,000 ???? to 9WzDXw...YtAWWM (threshold 10,000).",
    },
    {
      when: "a 64-character alias meets a token symbol outside GSM-7",
      data: { ...foreignToken, alias: ALIAS_64, reason: SENT },
      sms: "Risk alert: Large transfer on Operations hot wallet for the Frankfurt desk, EUR set... (risk 82/100). Sent 1,250,000 ???? to 9WzDXw...YtAWWM (threshold 10,000).",
    },
    {
      when: "a Cyrillic alias meets a token symbol outside GSM-7 in a long reason",
      data: { ...foreignToken, alias: "Трежери кошелёк", condition: "suspicious_counterparty" as const, reason: RECEIVED },
      sms: "Risk alert: Suspicious counterparty on 7xKX...gAsU (risk 82/100). Received 1,250,000 ???? from 9WzDXw...YtAWWM (sanctioned, risk 95, threshold 75).",
    },
    {
      when: "an emoji alias meets a token symbol outside GSM-7 in a long reason",
      data: { ...foreignToken, alias: "🏦 Treasury", condition: "suspicious_counterparty" as const, reason: RECEIVED },
      sms: "Risk alert: Suspicious counterparty on 7xKX...gAsU (risk 82/100). Received 1,250,000 ???? from 9WzDXw...YtAWWM (sanctioned, risk 95, threshold 75).",
    },
    {
      when: "other text outside GSM-7 makes it UCS-2: the long alias gives way there too, and '…' stays one unit",
      data: { ...foreignText, alias: "Frankfurt settlement wallet", reason: SENT },
      sms: `Risk alert: Large transfer on 7xKX…gAsU. Sent 1,250,000 ${SYMBOL} to…`,
    },
    {
      when: "other text outside GSM-7 makes it UCS-2 and the alias has 64 characters",
      data: { ...foreignText, alias: ALIAS_64, reason: SENT },
      sms: `Risk alert: Large transfer on 7xKX…gAsU. Sent 1,250,000 ${SYMBOL} to…`,
    },
    {
      when: "other text outside GSM-7 makes it UCS-2 and the amount comes late in the reason",
      data: { ...foreignText, alias: null, condition: "suspicious_counterparty" as const, reason: RECEIVED },
      sms: "Risk alert: Suspicious counterparty on 7xKX…gAsU. Received 1,250,000…",
    },
  ])("keeps the amount whole when $when", ({ data, sms: expected }) => {
    const sms = renderSms(payload(data));
    expect(sms).toBe(expected);
    expect(sms).toContain("1,250,000");
    expectOneSegment(sms);
  });

  it.each([
    { symbol: SYMBOL, shown: "????" },
    { symbol: "USDС", shown: "USD?" }, // a Cyrillic С: must not read as USDC
    { symbol: "🐶", shown: "?" },
    { symbol: SYMBOL.repeat(16), shown: "????...????" }, // 64 characters, shortened by the reason
  ])("spells a token symbol outside GSM-7 with '?' for each character it cannot, keeping one 160-character segment: $symbol as $shown", ({ symbol, shown }) => {
    const movement = { direction: "sent", failed: false, amount: 1_250_000, token: symbol, counterparty: COUNTERPARTY, type: "transfer" } as const;
    const sms = renderSms(payload({ ...foreignToken, transaction: { ...foreignToken.transaction, token: symbol }, reason: largeTransferReason(movement, 10_000) }));
    expect(sms).toBe(`Risk alert: Large transfer on Treasury (risk 82/100). Sent 1,250,000 ${shown} to 9WzDXw...YtAWWM (threshold 10,000).`);
    expect(isGsm7(sms)).toBe(true);
  });

  it("keeps the wallet's score when a counterparty alert's reason is too long for the segment, cutting the reason at a whole word", () => {
    // 176 septets: with the score last, the cut fell on it ("Risk..." or "Risk 8").
    const sms = renderSms(
      payload({
        alias: null,
        condition: "suspicious_counterparty",
        reason: "Tried to receive 1,250,000 USDC from 9WzDXw…YtAWWM in an NFT trade (flagged, risk 95, threshold 75).",
      }),
    );
    expect(sms).toBe(
      "Risk alert: Suspicious counterparty on 7xKX...gAsU (risk 82/100). Tried to receive 1,250,000 USDC from 9WzDXw...YtAWWM in an NFT trade (flagged, risk 95...",
    );
    expectOneSegment(sms);
  });

  it("drops a number it cannot show whole rather than show part of it", () => {
    const sms = renderSms(payload({ alias: null, reason: `Sent ${"1,250,000 ".repeat(10)}USDC.` }));
    expect(sms).toBe(
      "Risk alert: Large transfer on 7xKX...gAsU (risk 82/100). Sent 1,250,000 1,250,000 1,250,000 1,250,000 1,250,000 1,250,000 1,250,000 1,250,000 1,250,000...",
    );
    expectOneSegment(sms);
  });

  it("states the score once in a score-increase SMS: its reason gives the new score", () => {
    const sms = renderSms(
      payload({ condition: "risk_score_increase", riskScore: 45, transaction: undefined, reason: "Risk score rose 25 points, from 20 to 45 (threshold 10): sanctioned counterparty." }),
    );
    expect(sms).toBe("Risk alert: Risk score increase on Treasury. Risk score rose 25 points, from 20 to 45 (threshold 10): sanctioned counterparty.");
  });

  it("puts the score last in a 70-unit UCS-2 segment, where the reason's amount comes first", () => {
    const sms = renderSms(payload({ alias: null, transaction: undefined, reason: "Sent 5 🐶 to 9WzDXw…YtAWWM (threshold 1)." }));
    expect(sms).toBe("Risk alert: Large transfer on 7xKX…gAsU. Sent 5 🐶 to 9WzDXw…YtAWWM…");
    expectOneSegment(sms);
  });

  it("says how long ago the alert fired when the SMS goes out more than 10 minutes after it, and nothing sooner", () => {
    // payload().timestamp is 2026-03-01T12:00:00.000Z.
    const rows: Array<[Date | undefined, string]> = [
      [undefined, "Risk alert: Large transfer on Treasury (risk 82/100)."],
      [new Date("2026-03-01T12:10:00.000Z"), "Risk alert: Large transfer on Treasury (risk 82/100)."],
      [new Date("2026-03-01T12:10:01.000Z"), "Risk alert (10 min ago): Large transfer on Treasury (risk 82/100)."],
      [new Date("2026-03-01T12:59:59.000Z"), "Risk alert (59 min ago): Large transfer on Treasury (risk 82/100)."],
      [new Date("2026-03-01T15:05:00.000Z"), "Risk alert (3h ago): Large transfer on Treasury (risk 82/100)."],
      [new Date("2026-03-04T12:10:00.000Z"), "Risk alert (3d ago): Large transfer on Treasury (risk 82/100)."],
    ];
    for (const [attemptAt, start] of rows) expect(renderSms(payload(), attemptAt).startsWith(start), `${attemptAt?.toISOString()}`).toBe(true);
    expect(renderSms(payload({}, "risk_alert.test"), new Date("2026-03-01T15:05:00.000Z"))).toMatch(/^Risk alert test \(3h ago\): /);
  });

  it("measures how late from the transaction's block time, not from when its batch was evaluated", () => {
    // A transfer at 06:00, evaluated at 12:00 after an outage, sent at 12:01: six hours old.
    const evaluatedLate = payload();
    evaluatedLate.data.transaction!.blockTime = Date.parse("2026-03-01T06:00:00.000Z") / 1000;
    expect(renderSms(evaluatedLate, new Date("2026-03-01T12:01:00.000Z"))).toMatch(/^Risk alert \(6h ago\): /);
    // A block time after the timestamp (a skewed clock) does not make the SMS look on time.
    const skewed = payload();
    skewed.data.transaction!.blockTime = Date.parse("2026-03-01T18:00:00.000Z") / 1000;
    expect(renderSms(skewed, new Date("2026-03-01T15:05:00.000Z"))).toMatch(/^Risk alert \(3h ago\): /);
  });

  it("measures how late a score change is from its notification's timestamp, as it has no transaction", () => {
    const scoreChange = payload({ condition: "risk_score_increase", transaction: undefined, reason: "Risk score rose 25 points, from 20 to 45 (threshold 10)." });
    expect(renderSms(scoreChange, new Date("2026-03-01T12:05:00.000Z"))).toMatch(/^Risk alert: /);
    expect(renderSms(scoreChange, new Date("2026-03-01T14:00:00.000Z"))).toMatch(/^Risk alert \(2h ago\): /);
  });

  it("cuts a long alias, not the facts, to make room for how late the SMS is", () => {
    const sms = renderSms(
      payload({ alias: ALIAS_64, condition: "suspicious_counterparty", riskScore: 90, reason: "Sent 5 SOL to 9WzDXw…YtAWWM (sanctioned, risk 95, threshold 75)." }),
      new Date("2026-03-01T15:05:00.000Z"),
    );
    expect(sms).toBe(
      "Risk alert (3h ago): Suspicious counterparty on Operations hot wallet for t... (risk 90/100). Sent 5 SOL to 9WzDXw...YtAWWM (sanctioned, risk 95, threshold 75).",
    );
    expectOneSegment(sms);
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
      "Threshold:    2.55× the usual hourly count",
      "Observed:     2.55× the usual hourly count",
    ]);
  });

  it("SMS: a transfer just over its threshold reads just over, not 10,000 against 10,000", () => {
    const sms = renderSms(transfer(9_999.996, 9_999.995, "USDC"));
    expect(sms).toBe("Risk alert: Large transfer on Treasury (risk 82/100). Sent 9,999.996 USDC to 9WzDXw...YtAWWM (threshold 9,999.995).");
    expect(gsm7Length(sms)).toBeLessThanOrEqual(GSM7_SEGMENT_SEPTETS);
  });

  const LATE = new Date("2026-03-01T15:05:00.000Z");
  const ALIAS_64 = "Operations hot wallet for the Frankfurt desk, EUR settlement #47";
  it.each([
    {
      when: "a long amount and threshold fit whole",
      sms: () => renderSms(transfer(123_456_789.12345679, 100_000_000.5, "USDC")),
      text: "Risk alert: Large transfer on Treasury (risk 82/100). Sent 123,456,789.12345679 USDC to 9WzDXw...YtAWWM (threshold 100,000,000.5).",
    },
    {
      when: "a 64-character alias gives way to a long amount",
      sms: () => renderSms(transfer(123_456_789.12345679, 100_000_000.5, "USDC", { alias: ALIAS_64 })),
      text: "Risk alert: Large transfer on Operations hot wallet for the Frank... (risk 82/100). Sent 123,456,789.12345679 USDC to 9WzDXw...YtAWWM (threshold 100,000,000.5).",
    },
    {
      when: "a mint, an NFT trade and a late note leave no room for the threshold: it goes whole",
      sms: () => renderSms(transfer(123_456_789.12345679, 100_000_000.12345679, BONK, { alias: null }, "nft"), LATE),
      text: "Risk alert (3h ago): Large transfer on 7xKX...gAsU (risk 82/100). Sent 123,456,789.12345679 DezX...B263 to 9WzDXw...YtAWWM in an NFT trade (threshold...",
    },
    {
      when: "a counterparty alert on a failed receipt of a long amount of a mint, late",
      sms: () => {
        const movement = { direction: "received", failed: true, amount: 123_456_789.12345679, token: BONK, counterparty: COUNTERPARTY, type: "nft" } as const;
        return renderSms(payload({ alias: null, condition: "suspicious_counterparty", reason: suspiciousCounterpartyReason(movement, 95, "sanctioned", 75) }), LATE);
      },
      text: "Risk alert (3h ago): Suspicious counterparty on 7xKX...gAsU (risk 82/100). Tried to receive 123,456,789.12345679 DezX...B263 from 9WzDXw...YtAWWM in an NFT...",
    },
  ])("SMS: one segment, the amount whole, when $when", ({ sms: render, text }) => {
    const sms = render();
    expect(sms).toBe(text);
    expect(isGsm7(sms)).toBe(true);
    expect(gsm7Length(sms)).toBeLessThanOrEqual(GSM7_SEGMENT_SEPTETS);
    expect(sms).toContain(" 123,456,789.12345679 ");
  });
});
