// Nothing doubled, nothing sent that should not be: replays, paused alerts, cooldowns.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { evaluateBatch } from "../../src/pipeline/evaluate-batch.ts";
import type { RunningWorkers } from "../../src/queue/run-workers.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { randomAddress } from "../helpers/chain.ts";
import { createAlert, eventsOf, settled, startWorkers, track, tx } from "../helpers/pipeline.ts";
import { bearer, ingestTransactions } from "../helpers/seed.ts";

let t: TestApp;
let workers: RunningWorkers;
let token: string;
const now = Math.floor(Date.now() / 1000);

beforeAll(async () => {
  t = await startTestApp("pipeline-replay");
  workers = startWorkers(t);
  token = await t.token("alice");
});
afterAll(async () => {
  await workers.close();
  await t.close();
});

const notificationCount = async (alertId: string) =>
  (await t.deps.sql<{ n: number }[]>`select count(*)::int as n from notifications where alert_id = ${alertId}`)[0]!.n;

async function largeTransferAlert(extra: { cooldownSeconds?: number } = {}) {
  const wallet = await track(t, token);
  const alertId = await createAlert(t, token, { walletId: wallet.walletId, condition: "large_transfer", threshold: 100, ...extra });
  return { wallet, alertId };
}

describe("replays", () => {
  it("fires nothing new when the same transactions are ingested again", async () => {
    const { wallet, alertId } = await largeTransferAlert();
    const batch = [tx({ from: wallet.address, to: randomAddress(), amount: 500, blockTime: now })];
    await ingestTransactions(t, token, batch);
    await settled(t);
    expect(await ingestTransactions(t, token, batch)).toEqual({ accepted: 0, duplicates: 1 });
    await settled(t);
    expect(await eventsOf(t, alertId)).toHaveLength(1);
    expect(await notificationCount(alertId)).toBe(1);
  });

  it("records each event once when a batch is evaluated again after its commit (a replayed job)", async () => {
    const { wallet, alertId } = await largeTransferAlert();
    await ingestTransactions(t, token, [
      tx({ from: wallet.address, to: randomAddress(), amount: 500, blockTime: now }),
      tx({ from: randomAddress(), to: wallet.address, amount: 700, blockTime: now + 1 }),
    ]);
    await settled(t);
    const [batch] = await t.deps.sql<{ batchId: string }[]>`
      select batch_id as "batchId" from transactions where from_address = ${wallet.address}`;
    const batchId = batch!.batchId;
    // The job itself sees the batch done and does nothing…
    expect(await evaluateBatch(t.deps, batchId)).toEqual({ status: "already-evaluated" });
    // …and even with the mark taken away, the unique (alert, dedupe key) keeps events single.
    await t.deps.sql`update ingest_batches set evaluated_at = null where id = ${batchId}`;
    const again = await evaluateBatch(t.deps, batchId);
    expect(again).toMatchObject({ status: "evaluated", events: 0, notifications: 0 });
    expect(await eventsOf(t, alertId)).toHaveLength(2);
    expect(await notificationCount(alertId)).toBe(2);
  });
});

describe("alert status and cooldown", () => {
  it("never fires a paused alert, and fires again once it is active", async () => {
    const { wallet, alertId } = await largeTransferAlert();
    const pause = await t.app.inject({
      method: "PATCH",
      url: `/v1/risk/alerts/${alertId}`,
      headers: bearer(token),
      payload: { status: "paused" },
    });
    expect(pause.statusCode).toBe(200);
    await ingestTransactions(t, token, [tx({ from: wallet.address, to: randomAddress(), amount: 900, blockTime: now })]);
    await settled(t);
    expect(await eventsOf(t, alertId)).toEqual([]);

    await t.app.inject({ method: "PATCH", url: `/v1/risk/alerts/${alertId}`, headers: bearer(token), payload: { status: "active" } });
    const later = tx({ from: wallet.address, to: randomAddress(), amount: 900, blockTime: now + 60 });
    await ingestTransactions(t, token, [later]);
    await settled(t);
    expect((await eventsOf(t, alertId)).map((e) => e.dedupeKey)).toEqual([later.signature]);
  });

  it("never fires a disabled alert (delivery kept failing)", async () => {
    const { wallet, alertId } = await largeTransferAlert();
    await t.deps.sql`update alerts set status = 'disabled' where id = ${alertId}`;
    await ingestTransactions(t, token, [tx({ from: wallet.address, to: randomAddress(), amount: 900, blockTime: now })]);
    await settled(t);
    expect(await eventsOf(t, alertId)).toEqual([]);
  });

  it("records events within the cooldown as suppressed and notifies only the first", async () => {
    const { wallet, alertId } = await largeTransferAlert({ cooldownSeconds: 3600 });
    await ingestTransactions(t, token, [
      tx({ from: wallet.address, to: randomAddress(), amount: 200, blockTime: now }),
      tx({ from: wallet.address, to: randomAddress(), amount: 300, blockTime: now + 1 }),
    ]);
    await settled(t);
    await ingestTransactions(t, token, [tx({ from: wallet.address, to: randomAddress(), amount: 400, blockTime: now + 2 })]);
    await settled(t);
    const events = await eventsOf(t, alertId);
    expect(events).toHaveLength(3);
    expect(events.filter((e) => !e.suppressed)).toHaveLength(1);
    // The first, and the cooldown's digest of the two held back, due when the cooldown ends.
    const sent = await t.deps.sql<{ type: string; due: boolean }[]>`
      select payload->>'type' as type, next_attempt_at > now() as due from notifications where alert_id = ${alertId} order by id`;
    expect(sent).toEqual([
      { type: "risk_alert.triggered", due: null },
      { type: "risk_alert.suppressed", due: true },
    ]);
    const [alert] = await t.deps.sql<{ notified: boolean }[]>`
      select last_notified_at is not null as notified from alerts where id = ${alertId}`;
    expect(alert!.notified).toBe(true);
  });
});
