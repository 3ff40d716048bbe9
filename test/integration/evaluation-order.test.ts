// Two real worker processes (`src/bin/worker.ts`) evaluating neighbouring batches at once still
// count them in ingest order, so an unusual_activity burst spread over several batches fires
// on its edge for every wallet: the transaction that makes the trailing hour's count reach the
// limit, never a later one, never none.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Transaction } from "../../src/domain/types.ts";
import { storeTransactionBatch } from "../../src/ingest/store.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { randomAddress } from "../helpers/chain.ts";
import { exited, seedWalletsWithAlert, settled, spawnWorker, tx } from "../helpers/pipeline.ts";

let t: TestApp;
const WALLETS = 200;
/** Wallets whose transactions share batches: one transaction of each per batch. */
const PER_BATCH = 10;
/** unusual_activity at 5 × the floor baseline of 1 an hour: the fifth transaction within the hour fires. */
const BURST = 5;
const wallets: Array<{ address: string; alertId: string }> = [];

beforeAll(async () => {
  t = await startTestApp("evaluation-order");
  wallets.push(...(await seedWalletsWithAlert(t, WALLETS, "unusual_activity", BURST)));
});
afterAll(async () => {
  await t.close();
});

describe("counting order with two worker processes", () => {
  it("fires each wallet's burst on the transaction that reaches the limit, with its transactions in neighbouring batches", async () => {
    // Wallets in sets of ten; a set's five transactions each go in five consecutive batches
    // (one of each wallet per batch, a second apart), so every burst spans five batches that
    // the two workers take side by side.
    const expected = new Set<string>();
    const start = 1_717_200_000;
    let batch = 0;
    for (let set = 0; set < WALLETS / PER_BATCH; set++) {
      for (let round = 0; round < BURST; round++, batch++) {
        const txs: Transaction[] = wallets.slice(set * PER_BATCH, (set + 1) * PER_BATCH).map((wallet) => {
          const item = tx({ from: wallet.address, to: randomAddress(), amount: 1, blockTime: start + batch });
          if (round === BURST - 1) expected.add(`${wallet.alertId} ${item.signature}`);
          return item;
        });
        await storeTransactionBatch(t.deps, txs);
      }
    }

    // One batch per evaluation, so the two workers always have neighbouring batches in hand.
    // EVALUATION_ORDER_WAIT is raised: a worker that a busy machine slows for 5 s would otherwise
    // be passed over as hung (README), and that is not what is under test here.
    const env = { WORKER_QUEUES: "transactions,risk,maintenance", EVALUATION_GROUP_TRANSACTIONS: String(PER_BATCH), EVALUATION_ORDER_WAIT: "60s" };
    const workers = [spawnWorker(t, env), spawnWorker(t, env)];
    try {
      await settled(t, 60_000);
    } finally {
      for (const worker of workers) worker.kill("SIGTERM");
      for (const worker of workers) expect((await exited(worker)).code, worker.output()).toBe(0);
    }
    const fired = await t.deps.sql<{ key: string }[]>`
      select alert_id || ' ' || dedupe_key as key from alert_events where condition = 'unusual_activity'`;
    expect(fired.map((row) => row.key).sort()).toEqual([...expected].sort());
  }, 120_000);
});
