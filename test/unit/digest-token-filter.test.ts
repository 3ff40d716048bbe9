// Which held-back firing a cooldown digest names, by its alert's token filter
// (domain/held-back-by-token.ts namedHeldBack), and how a filtered alert's digest reads. The diff
// review's scenario: a SOL alert's cooldown held back a 100,000 SOL receipt and a 1,001 SOL send;
// ranked per token, sent first, its digest called the 1,001 SOL the "largest" and the receipt
// reached no channel.
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormatsPlugin from "ajv-formats";
import { describe, expect, it } from "vitest";
import { namedHeldBack, namesEachToken, type TokenFiring } from "../../src/domain/held-back-by-token.ts";
import type { NotificationPayload, SuppressedSummary } from "../../src/domain/types.ts";
import { webhooksDocument } from "../../src/http/openapi-webhooks.ts";
import { ClosedSuppressedPayloadSchema } from "../../src/notify/digest-payload-schema.ts";
import { renderEmail } from "../../src/notify/render.ts";
import { renderSms } from "../../src/notify/render-sms.ts";
import { digestPayload } from "../../src/pipeline/cooldown-digest.ts";

const addFormats = addFormatsPlugin as unknown as (ajv: Ajv2020) => Ajv2020;
const SOL = { token: "SOL", mint: null };
const JUNK = { token: "6J9xq4Vb2mTz8WqB5nP2dLs7cYhE4uGaF1oNrk2xru", mint: "6J9xq4Vb2mTz8WqB5nP2dLs7cYhE4uGaF1oNrk2xru" };

type Firing = TokenFiring & { reason: string };
const firing = (eventId: string, observed: number, sent: boolean, token: TokenFiring["token"], second: number, reason: string): Firing => ({
  eventId,
  observed,
  sent,
  token,
  createdAt: new Date(Date.UTC(2026, 10, 28, 12, 0, second)).toISOString(),
  reason,
});
const RECEIPT = firing("evt_receipt", 100_000, false, SOL, 2, "Received 100,000 SOL from 3jS1EY…Vq7LmN (threshold 1,000).");
const SEND = firing("evt_send", 1_001, true, SOL, 4, "Sent 1,001 SOL to 4yPzgL…rSLLQA (threshold 1,000).");
const JUNK_IN = firing("evt_junk", 1_000_000_000_000, false, JUNK, 5, "Received 1,000,000,000,000 6J9x…2xru from GryGc8…EDgx82 (threshold 1,000).");

describe("the firing a cooldown digest names", () => {
  it("names a SOL alert's 100,000 SOL receipt, its highest, over the 1,001 SOL it sent, and no per-token list", () => {
    // The highest of all held back, as the database ranks them, beside each token's and direction's largest.
    const { strongest, byToken } = namedHeldBack({ condition: "large_transfer", token: "SOL" }, RECEIPT, [SEND, RECEIPT]);
    expect(strongest.eventId).toBe("evt_receipt");
    expect(byToken).toBeUndefined();
  });

  it("names an untokened alert's tokens, the 1,001 SOL it sent first, never comparing them with an outsider's junk", () => {
    const { strongest, byToken } = namedHeldBack({ condition: "large_transfer", token: null }, JUNK_IN, [SEND, RECEIPT, JUNK_IN]);
    expect(strongest.eventId).toBe("evt_send");
    expect(byToken!.named.map((named) => named.eventId)).toEqual(["evt_send", "evt_junk"]);
    expect(byToken!.otherTokens).toBe(0);
  });

  it("ranks every other condition's firings by the highest alone", () => {
    for (const condition of ["suspicious_counterparty", "unusual_activity", "risk_score_increase"] as const) {
      expect(namesEachToken({ condition, token: null }), condition).toBe(false);
      expect(namedHeldBack({ condition, token: null }, RECEIPT, [SEND, RECEIPT])).toEqual({ strongest: RECEIPT });
    }
  });

  it("names the highest when an untokened alert's firings have no token at all to rank by", () => {
    expect(namedHeldBack({ condition: "large_transfer", token: null }, RECEIPT, [])).toEqual({ strongest: RECEIPT });
  });
});

/** A SOL alert's digest as settleDigestPayload builds it: strongest the highest, no largestByToken. */
function solAlertDigest(): NotificationPayload {
  const { strongest } = namedHeldBack({ condition: "large_transfer", token: "SOL" }, RECEIPT, [SEND, RECEIPT]);
  const summary: SuppressedSummary = {
    count: 2,
    windowStart: "2026-11-28T12:00:00.000Z",
    windowEnd: "2026-11-28T12:00:12.000Z",
    firstAt: RECEIPT.createdAt,
    lastAt: SEND.createdAt,
    strongest: { eventId: strongest.eventId, observed: strongest.observed, reason: RECEIPT.reason, transactionSignature: "5receipt", createdAt: strongest.createdAt },
    eventIds: ["evt_receipt", "evt_send"],
  };
  const unbuilt: NotificationPayload = {
    type: "risk_alert.suppressed",
    timestamp: "2026-11-28T12:00:12.000Z",
    data: { alertId: "alr_sol", walletId: "wal_1", address: "8jb5Cq2sXhQpE4fTyKf3uR7vL9mN1wZ6aD5gH8jKkegn", alias: "SOL desk", condition: "large_transfer", threshold: 1_000, observed: null, riskScore: 20, riskFactors: [], reason: "" },
  };
  return digestPayload(unbuilt, summary, { riskScore: 20, riskFactors: [] }, new Date("2026-11-28T12:00:12.000Z"));
}

describe("a SOL alert's cooldown digest", () => {
  it("calls the receipt its largest, truly, in its reason, email and SMS", () => {
    const payload = solAlertDigest();
    expect(payload.data.observed).toBe(100_000);
    expect(payload.data.reason).toBe("2 more large_transfer firings held back during the cooldown; largest: Received 100,000 SOL from 3jS1EY…Vq7LmN (threshold 1,000).");
    const email = renderEmail(payload);
    expect(email.subject).toMatch(/^\[Risk alert\] SOL desk: 2 held back — largest: Received 100,000 SOL/);
    expect(email.text).toMatch(/^Largest: +Received 100,000 SOL from 3jS1EY…Vq7LmN \(threshold 1,000\)\.$/m);
    expect(email.text).not.toMatch(/^Other tokens:|token 1 of/m);
    expect(renderSms(payload)).toBe("Risk alert on SOL desk: 2 more large_transfer held back in the cooldown; largest: Received 100,000 SOL from 3jS1EY...Vq7LmN (threshold 1,000).");
  });

  it("is a body without largestByToken that the closed schema and the published webhook schema accept", () => {
    const body = JSON.parse(JSON.stringify(solAlertDigest())) as NotificationPayload;
    expect(body.data.suppressed).not.toHaveProperty("largestByToken");
    expect(body.data.suppressed).not.toHaveProperty("otherTokens");
    const ajv = addFormats(new Ajv2020({ strict: true, allErrors: true, allowUnionTypes: true }));
    const published = (webhooksDocument()["risk_alert.suppressed"] as { post: { requestBody: { content: Record<string, { schema: object }> } } }).post.requestBody
      .content["application/json"]!.schema;
    for (const schema of [JSON.parse(JSON.stringify(ClosedSuppressedPayloadSchema)) as object, published]) {
      const validate = ajv.compile(schema);
      expect(validate(body), ajv.errorsText(validate.errors)).toBe(true);
    }
  });
});
