// Evaluation groups, against real Postgres and Redis: a job takes the open batches behind its
// own as one group and skips those another evaluation holds.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { storeTransactionBatch } from "../../src/ingest/store.ts";
import { evaluateBatch } from "../../src/pipeline/evaluate-batch.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { randomAddress } from "../helpers/chain.ts";
import { createAlert, eventsOf, track, tx } from "../helpers/pipeline.ts";

let t: TestApp;
let token: string;
const now = Math.floor(Date.now() / 1000);
let clock = now;

beforeAll(async () => {
  t = await startTestApp("pipeline-grouping");
  token = await t.token("alice");
});
afterAll(async () => {
  await t.close();
});
// Each test starts with no open batch, so that groups hold only what the test stored.
beforeEach(async () => {
  await t.deps.sql`update ingest_batches set evaluated_at = now() where evaluated_at is null`;
});

/** Stores one batch of transfers from `from` (no job runs: the test evaluates by hand). */
async function store(from: string, amounts: number[]): Promise<string> {
  const { batchId } = await storeTransactionBatch(
    t.deps,
    amounts.map((amount) => tx({ from, to: randomAddress(), amount, blockTime: clock++ })),
  );
  return batchId!;
}

const openBatches = async () =>
  (await t.deps.sql<{ id: string }[]>`select id from ingest_batches where evaluated_at is null order by id`).map((r) => r.id);

describe("evaluation groups", () => {
  it("evaluates the open batches behind the one asked for together, and their jobs then find them done", async () => {
    const wallet = await track(t, token);
    const alertId = await createAlert(t, token, { walletId: wallet.walletId, condition: "large_transfer", threshold: 100 });
    const first = await store(wallet.address, [500]);
    const second = await store(wallet.address, [600, 50]);
    const third = await store(wallet.address, [700]);

    expect(await evaluateBatch(t.deps, second)).toMatchObject({ status: "evaluated", batches: 3, transactions: 4, events: 3 });
    expect(await openBatches()).toEqual([]);
    expect((await eventsOf(t, alertId)).map((e) => e.observed).sort()).toEqual([500, 600, 700]);
    for (const batchId of [first, third]) expect(await evaluateBatch(t.deps, batchId)).toEqual({ status: "already-evaluated" });
  });

  it("skips a batch that another evaluation holds, and evaluates it once that one gives it up", async () => {
    const wallet = await track(t, token);
    const alertId = await createAlert(t, token, { walletId: wallet.walletId, condition: "large_transfer", threshold: 100 });
    const held = await store(wallet.address, [500]);
    const free = await store(wallet.address, [600]);

    // Another evaluation's claim: the same advisory lock, held in an open transaction.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let holding!: () => void;
    const holds = new Promise<void>((resolve) => (holding = resolve));
    const other = t.deps.sql.begin(async (sql) => {
      await sql`select pg_advisory_xact_lock(${0x62617463}, hashtext(${held}))`;
      holding();
      await released;
    });
    await holds;
    expect(await evaluateBatch(t.deps, held)).toMatchObject({ status: "evaluated", batches: 1, events: 1 });
    expect(await openBatches()).toEqual([held]);
    expect(await evaluateBatch(t.deps, free)).toEqual({ status: "already-evaluated" });
    expect(await evaluateBatch(t.deps, held)).toEqual({ status: "claimed-elsewhere" });

    release();
    await other;
    expect(await evaluateBatch(t.deps, held)).toMatchObject({ status: "evaluated", batches: 1, events: 1 });
    expect((await eventsOf(t, alertId)).map((e) => e.observed).sort()).toEqual([500, 600]);
  });
});
