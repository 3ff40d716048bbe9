// A cooldown digest as its recipient reads it (notify/render-digest.ts), through the renderers
// every channel uses, and its body against the schemas the OpenAPI document publishes.
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormatsPlugin from "ajv-formats";
import { describe, expect, it } from "vitest";
import { largeTransferReason, suspiciousCounterpartyReason } from "../../src/domain/reason.ts";
import type { Condition, DigestCounterparty, NotificationPayload, SuppressedSummary } from "../../src/domain/types.ts";
import { webhooksDocument } from "../../src/http/openapi-webhooks.ts";
import { ClosedSuppressedPayloadSchema } from "../../src/notify/digest-payload-schema.ts";
import { digestPayload } from "../../src/pipeline/cooldown-digest.ts";
import { renderEmail } from "../../src/notify/render.ts";
import { gsm7Length, isGsm7, renderSms } from "../../src/notify/render-sms.ts";

const addFormats = addFormatsPlugin as unknown as (ajv: Ajv2020) => Ajv2020;
const WALLET = "8jb5Cq2sXhQpE4fTyKf3uR7vL9mN1wZ6aD5gH8jKkegn";

const summary = (count: number, reason = "Sent 1,000,000 SOL to 8jb5…kegn (threshold 100)."): SuppressedSummary => ({
  count,
  windowStart: "2026-11-28T05:46:00.000Z",
  windowEnd: "2026-11-28T05:46:20.000Z",
  firstAt: "2026-11-28T05:46:02.500Z",
  lastAt: "2026-11-28T05:46:05.000Z",
  strongest: {
    eventId: "evt_01",
    observed: 1_000_000,
    reason,
    transactionSignature: "5sig",
    createdAt: "2026-11-28T05:46:02.500Z",
  },
  eventIds: Array.from({ length: Math.min(count, 100) }, (_, i) => `evt_${String(i).padStart(2, "0")}`),
});

function digest(
  count: number,
  alias: string | null = "Cooldown desk",
  condition: Condition = "large_transfer",
  reason?: string,
  counterparty?: DigestCounterparty,
): NotificationPayload {
  const unbuilt: NotificationPayload = {
    type: "risk_alert.suppressed",
    timestamp: "2026-11-28T05:46:03.000Z",
    data: { alertId: "alr_1", walletId: "wal_1", address: WALLET, alias, condition, threshold: 100, observed: null, riskScore: 20, riskFactors: [], reason: "" },
  };
  return digestPayload(unbuilt, summary(count, reason), { riskScore: 20, riskFactors: [] }, new Date("2026-11-28T05:46:20.000Z"), counterparty);
}

/** The demo's OFAC-listed address, as the responder review's live run sent 250,000 SOL to it. */
const SANCTIONED = "6R9jQiXJ3vKmTz8WqB5nP2dLs7cYhE4uGaF1oNrkFJqLF";
const SANCTIONED_LABELS = [{ category: "sanctioned" as const, score: 100, source: "OFAC SDN" }];
/** The held-back 250,000 SOL send to it, behind a 1,500 SOL one: a large_transfer reason as domain/reason.ts writes it. */
const TO_SANCTIONED = largeTransferReason(
  { direction: "sent", failed: false, amount: 250_000, token: "SOL", counterparty: SANCTIONED, type: "transfer" },
  1_000,
  "sanctioned",
);
const LINKS = { explorerTxUrl: "https://solscan.io/tx/{signature}", explorerAddressUrl: "https://solscan.io/account/{address}" };

describe("a cooldown digest", () => {
  it("says how many firings were held back and the largest, in one GSM-7 SMS segment", () => {
    const sms = renderSms(digest(2));
    expect(sms).toBe("Risk alert on Cooldown desk: 2 more large_transfer held back in the cooldown; largest: Sent 1,000,000 SOL to 8jb5...kegn (threshold 100).");
    expect(isGsm7(sms)).toBe(true);
    expect(gsm7Length(sms)).toBeLessThanOrEqual(160);
  });

  it("keeps the SMS to 160 septets with a long or non-GSM-7 alias, naming the wallet by its short address only when GSM-7 cannot spell its alias", () => {
    const names: Array<[alias: string, name: string]> = [
      ["Treasury hot wallet of the fund's operations desk, Singapore", "Treasury hot wallet of the fund's operations desk, Singapore"],
      ["Казначейство", "8jb5...kegn"],
      ["€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€", "€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€"],
    ];
    for (const [alias, name] of names) {
      const sms = renderSms(digest(12_345, alias));
      expect(isGsm7(sms), alias).toBe(true);
      expect(gsm7Length(sms), alias).toBeLessThanOrEqual(160);
      expect(sms, alias).toMatch(/: 12,345 more large_transfer held back( in the cooldown)?; largest: Sent 1,000,000 SOL to 8jb5\.\.\.kegn/);
      expect(sms.startsWith(`Risk alert on ${name.slice(0, 12)}`), alias).toBe(true);
    }
    expect(renderSms(digest(1))).toBe("Risk alert on Cooldown desk: 1 more large_transfer held back in the cooldown: Sent 1,000,000 SOL to 8jb5...kegn (threshold 100).");
  });

  it("leads with the strongest's label and keeps the wallet's alias, cutting the reason instead", () => {
    // Until 2026-11-28: "Risk alert: FGK2...JBGr. 37 more suspicious_counterparty firings held back during the cooldown; riskiest: Sent 1,250,000 USDC to 6R9jQi...kFJqLF (sanctioned..."
    const sanctioned = "Sent 1,250,000 USDC to 6R9jQi…kFJqLF (sanctioned, risk 100, threshold 75).";
    expect(renderSms(digest(37, "Treasury", "suspicious_counterparty", sanctioned))).toBe(
      "Risk alert on Treasury: 37 more suspicious_counterparty held back in the cooldown; riskiest (SANCTIONED counterparty): Sent 1,250,000 USDC to 6R9jQi...kFJqLF.",
    );
    // A large_transfer's reason names its counterparty's label too (domain/reason.ts).
    expect(renderSms(digest(1, "Treasury", "large_transfer", "Sent 250,000 SOL to 6R9jQi…kFJqLF (sanctioned, threshold 1,000)."))).toBe(
      "Risk alert on Treasury: 1 more large_transfer held back in the cooldown (SANCTIONED counterparty): Sent 250,000 SOL to 6R9jQi...kFJqLF.",
    );
    const long = "Tried to receive 12,345,678.912345678 JitoSOL from 6R9jQi…kFJqLF in an NFT trade (sanctioned, risk 100, threshold 75).";
    const sms = renderSms(digest(12_345, "Treasury", "suspicious_counterparty", long));
    expect(sms).toBe(
      "Risk alert on Treasury: 12,345 more suspicious_counterparty held back; riskiest (SANCTIONED counterparty): Tried to receive 12,345,678.912345678 JitoSOL from...",
    );
    expect(gsm7Length(sms)).toBeLessThanOrEqual(160);
  });

  it("emails the count, the window, the largest and its transaction, and the events", () => {
    const email = renderEmail(digest(2));
    // Until 2026-11-28: "[Risk alert] Cooldown desk: 2 more large_transfer held back in the cooldown", no amount.
    expect(email.subject).toBe("[Risk alert] Cooldown desk: 2 held back — largest: Sent 1,000,000 SOL to…");
    expect(email.text).toContain("2 more large_transfer firings held back during the cooldown; largest: Sent 1,000,000 SOL to 8jb5…kegn (threshold 100).");
    expect(email.text).toMatch(/^Held back: +2 firings, from 2026-11-28 05:46:02 UTC to 2026-11-28 05:46:05 UTC$/m);
    expect(email.text).toMatch(/^Cooldown: +2026-11-28 05:46:00 UTC to 2026-11-28 05:46:20 UTC$/m);
    expect(email.text).toMatch(/^Largest: +Sent 1,000,000 SOL to 8jb5…kegn \(threshold 100\)\.$/m);
    expect(email.text).toMatch(/^Detected at: +2026-11-28 05:46:02 UTC$/m);
    expect(email.text).toMatch(/^Transaction: +5sig$/m);
    expect(email.text).toContain("evt_00, evt_01");
    expect(email.text).not.toMatch(/^Time:/m);
    expect(email.html).toContain("2 more large_transfer firings held back");
  });

  it("names in its subject what the strongest held-back firing was and its amount, within 78 characters", () => {
    // The review's live run: 1,500 SOL sent, then 250,000 SOL to an OFAC-listed address and 5,000 SOL held back.
    const subject = (alias: string | null, condition: Condition, reason: string, count = 2) => renderEmail(digest(count, alias, condition, reason)).subject;
    expect(subject("Tesorería", "large_transfer", TO_SANCTIONED)).toBe("[Risk alert] Tesorería: 2 held back — SANCTIONED — largest: Sent 250,000 SOL…");
    // What fired as a firing's subject names it, where the amount and its token still fit; the label alone where they would not.
    expect(subject("Desk", "large_transfer", "Sent 2 SOL to 6R9jQi…kFJqLF (sanctioned, threshold 1).", 1)).toBe(
      "[Risk alert] Desk: 1 held back — Large transfer to SANCTIONED — Sent 2 SOL to…",
    );
    expect(subject("Desk", "large_transfer", "Sent 2,000 SOL to 6R9jQi…kFJqLF (sanctioned, threshold 1,000).", 1)).toBe(
      "[Risk alert] Desk: 1 held back — SANCTIONED — Sent 2,000 SOL to 6R9jQi…kFJqLF",
    );
    expect(subject("Desk", "large_transfer", "Received 1,500 SOL from 6XJUGh…z2Sbwi (threshold 1,000).", 1)).toBe(
      "[Risk alert] Desk: 1 held back — Large transfer — Received 1,500 SOL from…",
    );
    const sanctionedRisk = suspiciousCounterpartyReason(
      { direction: "sent", failed: false, amount: 1_250_000, token: "USDC", counterparty: SANCTIONED, type: "transfer" },
      100,
      "sanctioned",
      75,
    );
    expect(subject("Treasury", "suspicious_counterparty", sanctionedRisk, 37)).toBe("[Risk alert] Treasury: 37 held back — SANCTIONED — Sent 1,250,000 USDC to…");
    expect(subject("Desk", "risk_score_increase", "Risk score rose 36 points, from 60 to 96 (threshold 10): sanctioned counterparty.", 1)).toBe(
      "[Risk alert] Desk: 1 held back — Risk score 60 → 96: sanctioned counterparty",
    );
    const aliases = [null, "Treasury", "Treasury hot wallet of the fund's operations desk, Singapore"];
    // amount: what the subject keeps of it (its token goes before the label does); null: too long to keep beside the label.
    const reasons: Array<[Condition, string, amount: string | null]> = [
      ["large_transfer", TO_SANCTIONED, "Sent 250,000"],
      ["large_transfer", "Tried to receive 12,345,678.912345678 JitoSOL from 6R9jQi…kFJqLF in an NFT trade (sanctioned, threshold 75).", null],
      ["suspicious_counterparty", sanctionedRisk, "Sent 1,250,000"],
      ["unusual_activity", "5 transactions in the last hour, 5× the floor of 1 per hour (no earlier activity, threshold 5×).", "5 transactions"],
    ];
    for (const alias of aliases) {
      for (const [condition, reason, amount] of reasons) {
        const shown = subject(alias, condition, reason, 12_345);
        expect([...shown].length, shown).toBeLessThanOrEqual(78);
        expect(shown, shown).toMatch(/: 12,345 held back — /);
        if (amount !== null) expect(shown, shown).toContain(amount);
        if (reason.includes("sanctioned")) expect(shown, shown).toContain("SANCTIONED");
      }
    }
  });

  it("gives the strongest's counterparty in full with its labels, and links its transaction, the counterparty and the wallet", () => {
    const email = renderEmail(digest(2, "Tesorería", "large_transfer", TO_SANCTIONED, { address: SANCTIONED, labels: SANCTIONED_LABELS }), LINKS);
    expect(email.text).toMatch(new RegExp(`^Counterparty: +${SANCTIONED}$`, "m"));
    expect(email.text).toMatch(new RegExp(`^Counterparty page: +https://solscan\\.io/account/${SANCTIONED}$`, "m"));
    expect(email.text).toMatch(/^Explorer: +https:\/\/solscan\.io\/tx\/5sig$/m);
    expect(email.text).toMatch(/^Counterparty labels: sanctioned \(score 100, source OFAC SDN\), at the cooldown's end$/m);
    expect(email.text).toMatch(new RegExp(`^Wallet page: +https://solscan\\.io/account/${WALLET}$`, "m"));
    for (const url of ["https://solscan.io/tx/5sig", `https://solscan.io/account/${SANCTIONED}`, `https://solscan.io/account/${WALLET}`]) {
      expect(email.html).toContain(`<a href="${url}">${url}</a>`);
    }
    // A digest built before 2026-11-28 (or whose transaction names no one other side): the explorer link, no counterparty rows.
    const older = renderEmail(digest(2, "Tesorería", "large_transfer", TO_SANCTIONED), LINKS);
    expect(older.text).toMatch(/^Explorer: +https:\/\/solscan\.io\/tx\/5sig$/m);
    expect(older.text).not.toMatch(/^Counterparty/m);
    // No templates: no links.
    expect(renderEmail(digest(2, "Tesorería", "large_transfer", TO_SANCTIONED, { address: SANCTIONED, labels: [] })).text).not.toMatch(/^(Explorer|.* page):/m);
  });

  it("escapes what a caller or an operator wrote (an alias, a label's source) in its HTML part", () => {
    const labels = [{ category: "sanctioned" as const, score: 100, source: "<b>OFAC</b>" }];
    const { html } = renderEmail(digest(2, "<script>x</script>", "large_transfer", TO_SANCTIONED, { address: SANCTIONED, labels }), LINKS);
    expect(html).not.toMatch(/<script>|<b>/);
    expect(html).toContain("&#60;b&#62;OFAC&#60;/b&#62;");
    expect(html).toContain("&#60;script&#62;x&#60;/script&#62;");
  });

  it("is a body the closed schema and the published webhook schema accept", () => {
    const ajv = addFormats(new Ajv2020({ strict: true, allErrors: true, allowUnionTypes: true }));
    const published = (webhooksDocument()["risk_alert.suppressed"] as { post: { requestBody: { content: Record<string, { schema: object }> } } }).post.requestBody
      .content["application/json"]!.schema;
    const withCounterparty = digest(150, "Tesorería", "large_transfer", TO_SANCTIONED, { address: SANCTIONED, labels: [...SANCTIONED_LABELS, { category: "exchange", score: 10, source: null }] });
    for (const schema of [JSON.parse(JSON.stringify(ClosedSuppressedPayloadSchema)) as object, published]) {
      const validate = ajv.compile(schema);
      for (const body of [digest(150), withCounterparty]) expect(validate(JSON.parse(JSON.stringify(body))), ajv.errorsText(validate.errors)).toBe(true);
    }
    expect(withCounterparty.data.suppressed!.strongest.counterparty).toEqual({ address: SANCTIONED, labels: [...SANCTIONED_LABELS, { category: "exchange", score: 10, source: null }] });
  });
});
