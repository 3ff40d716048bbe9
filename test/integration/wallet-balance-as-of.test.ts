// balanceAsOf: when the account snapshot a wallet's balance, token accounts and NFTs come from
// was stored, so that a wallet never reported (0 and empty for want of a snapshot) can be told
// from an empty one. Only a snapshot moves it: score writes share the address's row (and move
// its updated_at) but not the time of its figures.
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningWorkers } from "../../src/queue/run-workers.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { randomAddress } from "../helpers/chain.ts";
import { holdTransaction, waitForALockWait } from "../helpers/held-transaction.ts";
import { fromDatabaseMigratedUpTo } from "../helpers/migrated-up-to.ts";
import { putLabels, settled, startWorkers, tx } from "../helpers/pipeline.ts";
import { bearer, ingestAccounts, ingestTransactions, trackWallet, type AccountSnapshotInput } from "../helpers/seed.ts";

let t: TestApp;
let workers: RunningWorkers;
let alice: string;
let operator: string;
let ingestor: string;
beforeAll(async () => {
  t = await startTestApp("wallet-balance-as-of");
  workers = startWorkers(t);
  [alice, operator, ingestor] = await Promise.all([t.token("alice"), t.token("operator"), t.token("ingestor", "ingest:write")]);
});
afterAll(async () => {
  await workers?.close();
  await t?.close();
});

const snapshot = (address: string, balance: number): AccountSnapshotInput => ({ address, balance, tokenAccounts: [], nfts: [] });

/** balanceAsOf as the wallet detail and as the wallet's entry in the list say it (they must agree). */
async function balanceAsOf(walletId: string): Promise<string | null> {
  const detail = await t.app.inject({ url: `/v1/wallets/${walletId}`, headers: bearer(alice) });
  expect(detail.statusCode).toBe(200);
  const list = await t.app.inject({ url: "/v1/wallets?limit=100", headers: bearer(alice) });
  const entry = list.json().wallets.find((wallet: { walletId: string }) => wallet.walletId === walletId);
  expect(entry.balanceAsOf).toBe(detail.json().balanceAsOf);
  return detail.json().balanceAsOf;
}

/** The address's row as stored, its times in Unix microseconds. */
async function stateOf(address: string) {
  const [row] = await t.deps.sql<{ snapshotAt: string | null; updatedAt: string; riskScore: number }[]>`
    select (extract(epoch from snapshot_at) * 1000000)::bigint as "snapshotAt",
           (extract(epoch from updated_at) * 1000000)::bigint as "updatedAt", risk_score as "riskScore"
    from address_state where address = ${address}`;
  return { ...row!, snapshotAt: row!.snapshotAt === null ? null : BigInt(row!.snapshotAt), updatedAt: BigInt(row!.updatedAt) };
}

describe("balanceAsOf", () => {
  it("reads null for a wallet tracked without a snapshot, beside its balance 0 and empty lists", async () => {
    const wallet = await trackWallet(t, alice);
    expect(wallet).toMatchObject({ balance: 0, tokenAccounts: [], nfts: [], balanceAsOf: null });
    expect(await balanceAsOf(wallet.walletId)).toBeNull();
  });

  it("reads the time the snapshot was stored, an empty snapshot too", async () => {
    const wallet = await trackWallet(t, alice);
    const before = Date.now();
    await ingestAccounts(t, ingestor, [snapshot(wallet.address, 0)]);
    const after = Date.now();
    const asOf = await balanceAsOf(wallet.walletId);
    expect(asOf).not.toBeNull();
    const at = Date.parse(asOf!);
    expect(at).toBeGreaterThanOrEqual(before);
    expect(at).toBeLessThanOrEqual(after);
    // The stored time, to the millisecond (the answer drops the microseconds, never rounds up).
    const { snapshotAt } = await stateOf(wallet.address);
    expect(at).toBe(Number(snapshotAt! / 1000n));
  });

  it("is not moved by a change of the wallet's risk score (a label on a counterparty), nor by tracking the address again", async () => {
    const wallet = await trackWallet(t, alice);
    const counterparty = randomAddress();
    await ingestAccounts(t, ingestor, [snapshot(wallet.address, 2.5)]);
    await ingestTransactions(t, ingestor, [tx({ from: wallet.address, to: counterparty, blockTime: Math.floor(Date.now() / 1000) })]);
    await settled(t);
    const stored = await stateOf(wallet.address);
    const asOf = await balanceAsOf(wallet.walletId);

    expect((await putLabels(t, operator, [{ address: counterparty, category: "sanctioned", score: 100 }])).statusCode).toBe(200);
    await settled(t);
    await trackWallet(t, await t.token("bob"), { address: wallet.address });

    const rescored = await stateOf(wallet.address);
    // The score was written to the address's row (updated_at moved with it) ...
    expect(rescored.riskScore).toBe(90);
    expect(rescored.updatedAt).not.toBe(stored.updatedAt);
    // ... and the snapshot's time stayed.
    expect(rescored.snapshotAt).toBe(stored.snapshotAt);
    expect(await balanceAsOf(wallet.walletId)).toBe(asOf);
  });

  it("moves to the time of the next snapshot", async () => {
    const wallet = await trackWallet(t, alice);
    await ingestAccounts(t, ingestor, [snapshot(wallet.address, 1)]);
    const first = await stateOf(wallet.address);
    const before = Date.now();
    await ingestAccounts(t, ingestor, [snapshot(wallet.address, 4)]);
    const second = await stateOf(wallet.address);
    expect(second.snapshotAt! > first.snapshotAt!).toBe(true);
    const asOf = Date.parse((await balanceAsOf(wallet.walletId))!);
    expect(asOf).toBeGreaterThanOrEqual(before);
    expect(asOf).toBe(Number(second.snapshotAt! / 1000n));
  });
});

describe("balanceAsOf of snapshots stored at once", () => {
  it("dates the snapshot stored last, whose figures show, after one stored while it waited, though its transaction began first", async () => {
    const [low, high] = [await trackWallet(t, alice), await trackWallet(t, alice)].sort((a, b) => (a.address < b.address ? -1 : 1));
    // A score write holding the first address's row: a snapshot of both addresses (stored in
    // address order) begins, and waits there before it reaches the second.
    const holder = postgres(t.config.databaseUrl, { max: 1, onnotice: () => {} });
    try {
      const release = await holdTransaction(holder, (tx) => tx`select 1 from address_state where address = ${low!.address} for update`);
      const both = ingestAccounts(t, ingestor, [snapshot(low!.address, 1), snapshot(high!.address, 1)]);
      await waitForALockWait(t.deps.sql, "the snapshot of both addresses to wait for the first one's row");
      await ingestAccounts(t, ingestor, [snapshot(high!.address, 2)]);
      const meanwhile = await stateOf(high!.address);
      await release();
      await both;

      const last = await stateOf(high!.address);
      expect(last.snapshotAt! > meanwhile.snapshotAt!).toBe(true);
      const detail = (await t.app.inject({ url: `/v1/wallets/${high!.walletId}`, headers: bearer(alice) })).json();
      expect(detail.balance).toBe(1);
      expect(Date.parse(detail.balanceAsOf)).toBe(Number(last.snapshotAt! / 1000n));
    } finally {
      await holder.end();
    }
  });
});

describe("migration 0025", () => {
  it("leaves the addresses stored before it without a snapshot time, and finds the score history index built by hand beforehand", async () => {
    await fromDatabaseMigratedUpTo(
      24,
      async (old, upgrade) => {
        await old`insert into address_state (address, balance, token_account_count) values ('reported', 12.5, 1), ('scored', 0, 0)`;
        // The README's way on a large table: the new index built and the old one dropped without blocking writes.
        await old.unsafe(`CREATE INDEX CONCURRENTLY IF NOT EXISTS "risk_score_history_address_id_idx" ON "risk_score_history" ("address","id")`);
        await old.unsafe(`DROP INDEX CONCURRENTLY IF EXISTS "risk_score_history_address_idx"`);
        await upgrade();
        const rows = await old`select address, snapshot_at as "snapshotAt" from address_state order by address`;
        expect(rows).toEqual([
          { address: "reported", snapshotAt: null },
          { address: "scored", snapshotAt: null },
        ]);
        const indexes = await old<{ name: string; definition: string }[]>`
          select indexname as name, indexdef as definition from pg_indexes where tablename = 'risk_score_history' order by indexname`;
        expect(indexes.map((index) => index.name)).toEqual([
          "risk_score_history_address_id_idx",
          "risk_score_history_pkey",
          "risk_score_history_unevaluated_address_idx",
        ]);
      },
      { nextTag: "0025_snapshot-time-and-score-history-by-id" },
    );
  });
});
