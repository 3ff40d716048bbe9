// What a receiver gets for a swap, end to end: Helius webhook → Postgres → real BullMQ workers →
// a signed POST to a loopback receiver. A large_transfer alert without a token filter names both
// sides of a swap of 10,000 SOL for 2,000,000 BONK, what left the wallet first (it read "Received
// 2,000,000 BONK" alone: raw amounts of two tokens compared), and every firing carries its facts
// as fields: the wallet's side, the counterparty with each label and its source ("OFAC SDN"),
// unusual_activity's counts and risk_score_increase's baseline.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Condition, NotificationPayload } from "../../src/domain/types.ts";
import { WRAPPED_SOL_MINT } from "../../src/domain/tokens.ts";
import type { HeliusTransaction } from "../../src/ingest/helius.ts";
import type { RunningWorkers } from "../../src/queue/run-workers.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { MINTS, randomAddress, randomSignature } from "../helpers/chain.ts";
import { putLabels, settled, startWorkers, track } from "../helpers/pipeline.ts";
import { bearer } from "../helpers/seed.ts";
import { waitFor } from "../helpers/wait.ts";
import { startWebhookReceiver, type Route, type WebhookReceiver } from "../helpers/webhook-receiver.ts";

const SECRET = "swap-webhook-facts-auth-header-0123";
const now = Math.floor(Date.now() / 1000);

let t: TestApp;
let workers: RunningWorkers;
let receiver: WebhookReceiver;
let token: string;

beforeAll(async () => {
  t = await startTestApp("swap-webhook-facts", { HELIUS_AUTH_HEADER: SECRET });
  receiver = await startWebhookReceiver();
  workers = startWorkers(t, ["transactions", "risk", "deliver-webhook"]);
  token = await t.token("fund-desk");
});
afterAll(async () => {
  await workers?.close();
  await receiver?.close();
  await t?.close();
});

/** A webhook alert on the wallet, its receiver checking every signature with the alert's secret. */
async function alertOn(walletId: string, condition: Condition, threshold: number): Promise<Route> {
  const route = receiver.route(`/${condition}`);
  const res = await t.app.inject({
    method: "POST",
    url: "/v1/risk/alerts",
    headers: bearer(token),
    payload: { walletId, condition, threshold, notificationMethod: "webhook", webhookUrl: route.url },
  });
  expect(res.statusCode, res.body).toBe(201);
  return route.verifyWith(res.json<{ webhookSecret: string }>().webhookSecret);
}

/** The one firing a route received, signature-verified. */
async function firingAt(route: Route): Promise<NotificationPayload["data"]> {
  const [request] = await waitFor(`a firing at ${route.path}`, async () => {
    const firings = route.requests.filter((r) => (JSON.parse(r.body) as NotificationPayload).type === "risk_alert.triggered");
    return firings.length > 0 ? firings : undefined;
  });
  expect(request!.verifiedWith, `${route.path}: signature`).toHaveLength(1);
  return (JSON.parse(request!.body) as NotificationPayload).data;
}

describe("a swap of 10,000 SOL for 2,000,000 BONK with an OFAC-listed pool", () => {
  it("reaches each receiver signed, naming both sides of the swap, the SOL sent first, with the counterparty's labels and sources as fields", async () => {
    const pool = randomAddress();
    const labelled = await putLabels(t, token, [
      { address: pool, category: "sanctioned", score: 100, source: "OFAC SDN" },
      { address: pool, category: "mixer", score: 90, source: "vendor-x" },
    ]);
    expect(labelled.statusCode, labelled.body).toBe(200);
    const wallet = await track(t, token, randomAddress(), "Fund hot wallet");
    const routes = {
      large: await alertOn(wallet.walletId, "large_transfer", 1_000),
      suspicious: await alertOn(wallet.walletId, "suspicious_counterparty", 75),
      activity: await alertOn(wallet.walletId, "unusual_activity", 1),
      score: await alertOn(wallet.walletId, "risk_score_increase", 10),
    };

    const swap: HeliusTransaction = {
      signature: randomSignature(),
      slot: 300_000_000 + now,
      timestamp: now,
      fee: 5000,
      feePayer: wallet.address,
      type: "SWAP",
      transactionError: null,
      nativeTransfers: [],
      tokenTransfers: [
        { fromUserAccount: pool, toUserAccount: wallet.address, mint: MINTS.BONK, tokenAmount: 2_000_000 },
        { fromUserAccount: wallet.address, toUserAccount: pool, mint: WRAPPED_SOL_MINT, tokenAmount: 10_000 },
      ],
    };
    const res = await t.app.inject({ method: "POST", url: "/v1/ingest/helius", headers: { authorization: SECRET }, payload: [swap] });
    expect(res.statusCode, res.body).toBe(202);
    await settled(t);

    const labels = [
      { category: "sanctioned", score: 100, source: "OFAC SDN" },
      { category: "mixer", score: 90, source: "vendor-x" },
    ];
    const large = await firingAt(routes.large);
    expect(large.reason).toBe("Sent 10,000 SOL and received 2,000,000 BONK in a swap (threshold 1,000).");
    expect(large).toMatchObject({
      observed: 10_000,
      transaction: { signature: swap.signature, token: "SOL", mint: WRAPPED_SOL_MINT, amount: 10_000, from: wallet.address, to: pool, type: "swap" },
      direction: "sent",
      counterparty: { address: pool, risk: 100, labels },
    });

    const suspicious = await firingAt(routes.suspicious);
    expect(suspicious.reason).toContain("(sanctioned, risk 100, threshold 75)");
    expect(suspicious).toMatchObject({ observed: 100, counterparty: { address: pool, risk: 100, labels } });
    expect(suspicious.direction).toBe(suspicious.transaction!.from === wallet.address ? "sent" : "received");

    const activity = await firingAt(routes.activity);
    expect(activity.activity).toEqual({ count: 1, baselinePerHour: 1 });

    // The wallet paid a sanctioned address: its score rose from the baseline the alert held.
    const score = await firingAt(routes.score);
    expect(score.transaction).toBeUndefined();
    expect(score.previousScore).toEqual(expect.any(Number));
    expect(score.previousScore! + score.observed!).toBe(score.riskScore);

    // One event per alert for the swap, and nothing else sent.
    const [events] = await t.deps.sql<Array<{ count: number }>>`
      select count(*)::int as count from alert_events e join alerts a on a.id = e.alert_id where a.wallet_id = ${wallet.walletId}`;
    expect(events!.count).toBe(4);
    for (const route of Object.values(routes)) expect(route.requests, route.path).toHaveLength(1);
  });
});
