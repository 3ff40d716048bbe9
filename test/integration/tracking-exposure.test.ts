// A first tracking reads what grows with the address's stored history (its label exposure, the
// history its activity counters are seeded from) before it takes ingest's lock, so that no
// ingest waits for that (src/pipeline/track-wallet.ts). What is stored meanwhile still counts:
// under the lock the tracking reads again the rows newer than its mark of the settled ones, or
// the whole history when the settled rows changed. Here a batch is stored, and marked evaluated
// (as by an evaluation that ran while nobody tracked the address), while the tracking waits
// for Redis in the middle of its seeding.
import type { Command } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Transaction } from "../../src/domain/types.ts";
import { newId } from "../../src/ids.ts";
import { createLogger } from "../../src/logger.ts";
import { activityStateKey } from "../../src/pipeline/activity.ts";
import { trackWallet } from "../../src/pipeline/track-wallet.ts";
import { createCommandRedis, whenReady } from "../../src/redis.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { randomAddress } from "../helpers/chain.ts";
import { putLabels, tx } from "../helpers/pipeline.ts";
import { bearer, ingestTransactions } from "../helpers/seed.ts";

let t: TestApp;
let alice: string;
beforeAll(async () => {
  t = await startTestApp("tracking-exposure");
  alice = await t.token("alice");
});
afterAll(async () => {
  await t.close();
});

const now = Math.floor(Date.now() / 1000);

/**
 * Tracks `address` for alice, and while its seeding waits for Redis to answer its first command
 * (the deletion of the address's counters), stores `meanwhile` and marks it evaluated. The
 * ingest must not wait for the tracking: were the seeding under ingest's lock, it would never end.
 */
async function trackWhileStoring(address: string, meanwhile: Transaction[]): Promise<string> {
  const held = createCommandRedis(t.config.redisUrl);
  let reached!: () => void;
  const atSeeding = new Promise<void>((resolve) => (reached = resolve));
  let answer!: () => void;
  const answering = new Promise<void>((resolve) => (answer = resolve));
  const send = held.sendCommand.bind(held);
  let heldOnce = false;
  held.sendCommand = (command: Command, stream?: Parameters<typeof send>[1]) => {
    const deletesCounters = command.name === "unlink" && command.args.includes(activityStateKey(t.config.queuePrefix, address));
    if (heldOnce || !deletesCounters) return send(command, stream);
    heldOnce = true;
    reached();
    void answering.then(() => send(command, stream));
    return command.promise;
  };
  try {
    expect(await whenReady(held, 5_000)).toBe(true);
    const id = newId("wal");
    const tracking = trackWallet({ ...t.deps, redis: held, logger: createLogger("silent") }, { id, owner: "alice", address, alias: null, tags: [] });
    await atSeeding;
    expect(await ingestTransactions(t, alice, meanwhile)).toMatchObject({ accepted: meanwhile.length });
    await t.deps.sql`update ingest_batches set evaluated_at = now() where evaluated_at is null`;
    answer();
    expect(await tracking).toEqual({ kind: "tracked" });
    return id;
  } finally {
    held.disconnect();
  }
}

async function shown(walletId: string) {
  const [detail, history] = await Promise.all([
    t.app.inject({ url: `/v1/wallets/${walletId}`, headers: bearer(alice) }),
    t.app.inject({ url: `/v1/transactions?walletId=${walletId}&limit=1`, headers: bearer(alice) }),
  ]);
  const { riskScore, riskFactors } = detail.json() as { riskScore: number; riskFactors: string[] };
  return { riskScore, riskFactors, total: (history.json() as { total: number }).total };
}

describe("a first tracking", () => {
  it("scores a labelled counterparty of a batch stored while it seeded the counters, and counts the batch", async () => {
    const address = randomAddress();
    const mixer = randomAddress();
    expect((await putLabels(t, alice, [{ address: mixer, category: "mixer", score: 90 }])).statusCode).toBe(200);
    await ingestTransactions(t, alice, [tx({ from: address, to: randomAddress(), blockTime: now - 86_400 })]);
    await t.deps.sql`update ingest_batches set evaluated_at = now() where evaluated_at is null`;

    const walletId = await trackWhileStoring(address, [tx({ from: address, to: mixer, blockTime: now - 60 })]);
    expect(await shown(walletId)).toEqual({ riskScore: 60, riskFactors: ["mixer_interaction"], total: 2 });
  });

  it("scores one stored meanwhile with a block time older than its settled transactions (a back-fill)", async () => {
    const address = randomAddress();
    const mixer = randomAddress();
    expect((await putLabels(t, alice, [{ address: mixer, category: "mixer", score: 90 }])).statusCode).toBe(200);
    await ingestTransactions(t, alice, [
      tx({ from: address, to: randomAddress(), blockTime: now - 7_200 }),
      tx({ from: randomAddress(), to: address, blockTime: now - 3_600 }),
    ]);
    await t.deps.sql`update ingest_batches set evaluated_at = now() where evaluated_at is null`;

    const walletId = await trackWhileStoring(address, [tx({ from: mixer, to: address, blockTime: now - 30 * 86_400 })]);
    expect(await shown(walletId)).toEqual({ riskScore: 60, riskFactors: ["mixer_interaction"], total: 3 });
  });
});
