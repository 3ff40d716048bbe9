// What an alert's event says about a transaction of several legs, end to end (Helius webhook →
// Postgres → real worker → alert events): the strongest leg is the event (the riskiest
// counterparty, not the first leg), and large_transfer judges the wallet's legs of one token
// and direction by their total.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { NotificationPayload } from "../../src/domain/types.ts";
import type { HeliusTransaction } from "../../src/ingest/helius.ts";
import type { RunningWorkers } from "../../src/queue/run-workers.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { MINTS, randomAddress, randomSignature } from "../helpers/chain.ts";
import { createAlert, eventsOf, putLabels, settled, startWorkers, track } from "../helpers/pipeline.ts";

const SECRET = "multi-leg-firings-auth-header-0123";
const now = Math.floor(Date.now() / 1000);

let t: TestApp;
let workers: RunningWorkers;
let token: string;

beforeAll(async () => {
  t = await startTestApp("multi-leg-firings", { HELIUS_AUTH_HEADER: SECRET });
  workers = startWorkers(t);
  token = await t.token("desk");
});
afterAll(async () => {
  await workers.close();
  await t.close();
});

type Leg = { from: string; to: string; amount: number };

/** A TRANSFER item: SOL legs (amounts in SOL) and USDC legs, in that order. */
function item(sol: Leg[], usdc: Leg[]): HeliusTransaction {
  return {
    signature: randomSignature(),
    slot: 300_000_000 + now,
    timestamp: now,
    fee: 5000,
    feePayer: (usdc[0] ?? sol[0])!.from,
    type: "TRANSFER",
    transactionError: null,
    nativeTransfers: sol.map((leg) => ({ fromUserAccount: leg.from, toUserAccount: leg.to, amount: leg.amount * 1_000_000_000 })),
    tokenTransfers: usdc.map((leg) => ({ fromUserAccount: leg.from, toUserAccount: leg.to, mint: MINTS.USDC, tokenAmount: leg.amount })),
  };
}

async function deliver(items: HeliusTransaction[]): Promise<void> {
  const res = await t.app.inject({ method: "POST", url: "/v1/ingest/helius", headers: { authorization: SECRET }, payload: items });
  expect(res.statusCode).toBe(202);
  await settled(t);
}

const payloadsOf = (alertId: string) => t.deps.sql<{ payload: NotificationPayload }[]>`
  select n.payload from notifications n join alert_events e on e.id = n.event_id where e.alert_id = ${alertId}`;

describe("an alert fired by several legs of one transaction", () => {
  it("names the riskiest counterparty, not the first leg's: 50 SOL to a sanctioned address beside 1,000 USDC to an exchange", async () => {
    const [exchange, sanctioned] = [randomAddress(), randomAddress()];
    const labels = [
      { address: exchange, category: "exchange", score: 80 },
      { address: sanctioned, category: "sanctioned", score: 100 },
    ];
    expect((await putLabels(t, token, labels)).statusCode).toBe(200);
    const w = await track(t, token);
    const alertId = await createAlert(t, token, { walletId: w.walletId, condition: "suspicious_counterparty", threshold: 75 });
    // The token transfer is the principal leg (leg 0); the SOL to the sanctioned address comes after it.
    const paid = item([{ from: w.address, to: sanctioned, amount: 50 }], [{ from: w.address, to: exchange, amount: 1_000 }]);
    await deliver([paid]);

    const events = await eventsOf(t, alertId);
    expect(events).toMatchObject([{ dedupeKey: paid.signature, observed: 100, suppressed: false }]);
    const [notification] = await payloadsOf(alertId);
    expect(notification!.payload.data.reason).toMatch(/^Sent 50 SOL to .+ \(sanctioned, risk 100, threshold 75\)\.$/);
    expect(notification!.payload.data.transaction).toMatchObject({ signature: paid.signature, to: sanctioned, amount: 50, token: "SOL" });
  });

  it("fires large_transfer on the total of two 6,000 USDC legs to the wallet against a 10,000 USDC threshold", async () => {
    const w = await track(t, token);
    const alertId = await createAlert(t, token, { walletId: w.walletId, condition: "large_transfer", threshold: 10_000, token: "USDC" });
    const payer = randomAddress();
    const split = item([], [
      { from: payer, to: w.address, amount: 6_000 },
      { from: payer, to: w.address, amount: 6_000 },
    ]);
    await deliver([split]);

    const events = await eventsOf(t, alertId);
    expect(events).toMatchObject([{ dedupeKey: split.signature, observed: 12_000 }]);
    const notifications = await payloadsOf(alertId);
    expect(notifications).toHaveLength(1);
    expect(notifications[0]!.payload.data.reason).toMatch(/^Received 12,000 USDC from .+ in 2 transfers \(threshold 10,000\)\.$/);
  });

  it("does not add legs in two directions: 6,000 USDC in and 6,000 USDC out stay under 10,000", async () => {
    const w = await track(t, token);
    const alertId = await createAlert(t, token, { walletId: w.walletId, condition: "large_transfer", threshold: 10_000, token: "USDC" });
    const other = randomAddress();
    await deliver([item([], [
      { from: other, to: w.address, amount: 6_000 },
      { from: w.address, to: other, amount: 6_000 },
    ])]);
    expect(await eventsOf(t, alertId)).toEqual([]);
  });
});
