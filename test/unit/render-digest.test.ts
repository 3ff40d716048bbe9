// A cooldown digest as its recipient reads it (notify/render-digest.ts), through the renderers
// every channel uses, and its body against the schemas the OpenAPI document publishes.
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormatsPlugin from "ajv-formats";
import { describe, expect, it } from "vitest";
import type { Condition, NotificationPayload, SuppressedSummary } from "../../src/domain/types.ts";
import { webhooksDocument } from "../../src/http/openapi-webhooks.ts";
import { ClosedSuppressedPayloadSchema } from "../../src/notify/digest-payload-schema.ts";
import { digestPayload } from "../../src/pipeline/cooldown-digest.ts";
import { renderEmail } from "../../src/notify/render.ts";
import { gsm7Length, isGsm7, renderSms } from "../../src/notify/render-sms.ts";

const addFormats = addFormatsPlugin as unknown as (ajv: Ajv2020) => Ajv2020;
const WALLET = "8jb5Cq2sXhQpE4fTyKf3uR7vL9mN1wZ6aD5gH8jKkegn";

const summary = (count: number, reason = "Sent 1,000,000 SOL to 8jb5…kegn (threshold 100)."): SuppressedSummary => ({
  count,
  windowStart: "2026-11-29T05:46:00.000Z",
  windowEnd: "2026-11-29T05:46:20.000Z",
  firstAt: "2026-11-29T05:46:02.500Z",
  lastAt: "2026-11-29T05:46:05.000Z",
  strongest: {
    eventId: "evt_01",
    observed: 1_000_000,
    reason,
    transactionSignature: "5sig",
    createdAt: "2026-11-29T05:46:02.500Z",
  },
  eventIds: Array.from({ length: Math.min(count, 100) }, (_, i) => `evt_${String(i).padStart(2, "0")}`),
});

function digest(count: number, alias: string | null = "Cooldown desk", condition: Condition = "large_transfer", reason?: string): NotificationPayload {
  const unbuilt: NotificationPayload = {
    type: "risk_alert.suppressed",
    timestamp: "2026-11-29T05:46:03.000Z",
    data: { alertId: "alr_1", walletId: "wal_1", address: WALLET, alias, condition, threshold: 100, observed: null, riskScore: 20, riskFactors: [], reason: "" },
  };
  return digestPayload(unbuilt, summary(count, reason), { riskScore: 20, riskFactors: [] }, new Date("2026-11-29T05:46:20.000Z"));
}

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
    // Until 2026-12: "Risk alert: FGK2...JBGr. 37 more suspicious_counterparty firings held back during the cooldown; riskiest: Sent 1,250,000 USDC to 6R9jQi...kFJqLF (sanctioned..."
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
    expect(email.subject).toBe("[Risk alert] Cooldown desk: 2 more large_transfer held back in the cooldown");
    expect(email.text).toContain("2 more large_transfer firings held back during the cooldown; largest: Sent 1,000,000 SOL to 8jb5…kegn (threshold 100).");
    expect(email.text).toMatch(/Held back: +2 firings, from 2026-11-29T05:46:02.500Z to 2026-11-29T05:46:05.000Z/);
    expect(email.text).toContain("5sig");
    expect(email.text).toContain("evt_00, evt_01");
    expect(email.html).toContain("2 more large_transfer firings held back");
  });

  it("is a body the closed schema and the published webhook schema accept", () => {
    const ajv = addFormats(new Ajv2020({ strict: true, allErrors: true, allowUnionTypes: true }));
    const published = (webhooksDocument()["risk_alert.suppressed"] as { post: { requestBody: { content: Record<string, { schema: object }> } } }).post.requestBody
      .content["application/json"]!.schema;
    for (const schema of [JSON.parse(JSON.stringify(ClosedSuppressedPayloadSchema)) as object, published]) {
      const validate = ajv.compile(schema);
      expect(validate(JSON.parse(JSON.stringify(digest(150)))), ajv.errorsText(validate.errors)).toBe(true);
    }
  });
});
