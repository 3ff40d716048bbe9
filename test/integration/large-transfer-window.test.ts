// large_transfer with windowSeconds, end to end: API → Postgres → BullMQ worker. A hot wallet
// drained in parts each below the threshold (structuring) fires once, on the part whose send
// brings the trailing sum to the threshold, whichever batch each part came in; a per-transaction
// alert of the same threshold fires nothing. The API refuses a window it cannot judge.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningWorkers } from "../../src/queue/run-workers.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { fieldErrors } from "../helpers/alert-fixtures.ts";
import { randomAddress } from "../helpers/chain.ts";
import { createAlert, eventsOf, settled, startWorkers, track, tx } from "../helpers/pipeline.ts";
import { bearer, ingestTransactions } from "../helpers/seed.ts";

const now = Math.floor(Date.now() / 1000);

let t: TestApp;
let workers: RunningWorkers;
let token: string;

beforeAll(async () => {
  t = await startTestApp("large-transfer-window");
  workers = startWorkers(t);
  token = await t.token("desk");
});
afterAll(async () => {
  await workers.close();
  await t.close();
});

const create = (payload: Record<string, unknown>) =>
  t.app.inject({
    method: "POST",
    url: "/v1/risk/alerts",
    headers: bearer(token),
    payload: { notificationMethod: "webhook", webhookUrl: "http://127.0.0.1:9/hook", ...payload },
  });

const alertCount = async () => (await t.deps.sql<{ n: number }[]>`select count(*)::int as n from alerts`)[0]!.n;

describe("a large_transfer alert with windowSeconds", () => {
  it("fires once for a drain of 15 sends of 700 SOL in 15 minutes (threshold 10,000, window 1 hour), on the 15th, with the sum; a replay fires nothing new", async () => {
    const wallet = await track(t, token);
    const created = await create({ walletId: wallet.walletId, condition: "large_transfer", threshold: 10_000, token: "SOL", windowSeconds: 3600 });
    expect(created.statusCode, created.body).toBe(201);
    const windowed = created.json().alertId as string;
    expect(created.json().windowSeconds).toBe(3600);
    const got = await t.app.inject({ url: `/v1/risk/alerts/${windowed}`, headers: bearer(token) });
    expect(got.json()).toMatchObject({ windowSeconds: 3600, token: "SOL", threshold: 10_000 });
    const perTransaction = await createAlert(t, token, { walletId: wallet.walletId, condition: "large_transfer", threshold: 10_000, token: "SOL" });

    // Each part below the threshold, in three batches: the sum reads the parts stored by earlier ones.
    const parts = Array.from({ length: 15 }, (_, k) => tx({ from: wallet.address, to: randomAddress(), amount: 700, token: "SOL", blockTime: now - 900 + 60 * k }));
    for (let k = 0; k < 15; k += 5) {
      await ingestTransactions(t, token, parts.slice(k, k + 5));
      await settled(t);
    }

    const events = await eventsOf(t, windowed);
    expect(events.map((e) => [e.dedupeKey, e.observed, e.suppressed])).toEqual([[parts[14]!.signature, 10_500, false]]);
    expect(await eventsOf(t, perTransaction)).toEqual([]);
    const listed = await t.app.inject({ url: `/v1/risk/alerts/${windowed}/events`, headers: bearer(token) });
    expect(listed.json().events.map((e: { reason: string }) => e.reason)).toEqual(["Sent 10,500 SOL in 15 transfers within 1 hour (threshold 10,000)."]);
    const [notification] = await t.deps.sql<{ payload: { data: Record<string, unknown> } }[]>`
      select payload from notifications where alert_id = ${windowed}`;
    expect(notification!.payload.data).toMatchObject({ observed: 10_500, direction: "sent", window: { seconds: 3600, transfers: 15 } });

    // The same parts again: nothing new.
    await ingestTransactions(t, token, parts);
    await settled(t);
    expect((await eventsOf(t, windowed)).map((e) => e.dedupeKey)).toEqual([parts[14]!.signature]);
  });

  it("judges a part that arrives late over the stored parts: those before its block time count, those after it do not", async () => {
    const wallet = await track(t, token);
    const alertId = await createAlertWithWindow(wallet.walletId, 5_000, 600);
    const send = (blockTime: number, amount: number) => tx({ from: wallet.address, to: randomAddress(), amount, token: "SOL", blockTime });
    const [first, last] = [send(now - 300, 2_000), send(now - 200, 2_000)];
    await ingestTransactions(t, token, [first!, last!]);
    await settled(t);
    expect(await eventsOf(t, alertId)).toEqual([]);
    // Between the two in block time, it arrives after both: its window holds the first (2,000) and itself.
    const late = send(now - 250, 3_000);
    await ingestTransactions(t, token, [late]);
    await settled(t);
    expect((await eventsOf(t, alertId)).map((e) => [e.dedupeKey, e.observed])).toEqual([[late.signature, 5_000]]);
  });

  it("fires once for a drain whose last part was delivered first, on the part that brings the sum at that last part to the threshold", async () => {
    const wallet = await track(t, token);
    const alertId = await createAlertWithWindow(wallet.walletId, 10_000, 3600);
    const parts = Array.from({ length: 15 }, (_, k) => tx({ from: wallet.address, to: randomAddress(), amount: 700, token: "SOL", blockTime: now - 900 + 60 * k }));
    await ingestTransactions(t, token, [parts[14]!]);
    await settled(t);
    expect(await eventsOf(t, alertId)).toEqual([]);
    await ingestTransactions(t, token, parts.slice(0, 14));
    await settled(t);
    expect((await eventsOf(t, alertId)).map((e) => [e.dedupeKey, e.observed])).toEqual([[parts[13]!.signature, 10_500]]);
  });

  it("keeps windowSeconds in the alert's history and its archive, and refuses it in a PATCH", async () => {
    const wallet = await track(t, token);
    const alertId = await createAlertWithWindow(wallet.walletId, 1_000, 900);
    const patched = await t.app.inject({ method: "PATCH", url: `/v1/risk/alerts/${alertId}`, headers: bearer(token), payload: { windowSeconds: 60 } });
    expect(fieldErrors(patched)).toEqual(["body.windowSeconds cannot change: create a new alert with the window you want (and delete this one)"]);
    expect((await t.app.inject({ method: "DELETE", url: `/v1/risk/alerts/${alertId}`, headers: bearer(token) })).statusCode).toBe(204);
    const history = await t.app.inject({ url: `/v1/risk/alerts/${alertId}/history`, headers: bearer(token) });
    const changes = history.json().history.map((c: { action: string; changes: Record<string, unknown> }) => [c.action, c.changes.windowSeconds]);
    expect(changes).toEqual([["created", [null, 900]], ["deleted", [900, null]]]);
    const [archived] = await t.deps.sql<{ settings: Record<string, unknown> }[]>`select settings from deleted_alerts where id = ${alertId}`;
    expect(archived!.settings).toMatchObject({ window_seconds: 900, token: "SOL" });
  });
});

async function createAlertWithWindow(walletId: string, threshold: number, windowSeconds: number): Promise<string> {
  const res = await create({ walletId, condition: "large_transfer", threshold, token: "SOL", windowSeconds });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().alertId as string;
}

describe("POST /v1/risk/alerts: windowSeconds", () => {
  let walletId: string;
  beforeAll(async () => {
    ({ walletId } = await track(t, token));
  });

  it.each([
    [
      "without a token",
      { condition: "large_transfer", threshold: 10, windowSeconds: 3600 },
      "body.windowSeconds requires token: a window sums the wallet's sends of one token, and amounts of different tokens are never added",
    ],
    ["on another condition", { condition: "unusual_activity", windowSeconds: 3600 }, "body.windowSeconds is only used by large_transfer alerts"],
    ["under a minute", { condition: "large_transfer", threshold: 10, token: "SOL", windowSeconds: 59 }, "body.windowSeconds"],
    ["over a day", { condition: "large_transfer", threshold: 10, token: "SOL", windowSeconds: 86_401 }, "body.windowSeconds"],
    ["not a whole number", { condition: "large_transfer", threshold: 10, token: "SOL", windowSeconds: 90.5 }, "body.windowSeconds"],
  ])("refuses a window %s with a 400 naming body.windowSeconds, and stores nothing", async (_name, body, expected) => {
    const before = await alertCount();
    const errors = fieldErrors(await create({ walletId, ...body }));
    expect(errors).toHaveLength(1);
    expect(errors[0]!.startsWith(expected)).toBe(true);
    expect(await alertCount()).toBe(before);
  });

  it("shows windowSeconds null on an alert without one", async () => {
    const res = await create({ walletId, condition: "large_transfer", threshold: 10, token: "SOL" });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().windowSeconds).toBeNull();
  });
});
