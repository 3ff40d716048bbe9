// The per-address counters behind lastActivity and the history's total: kept by ingest for
// tracked addresses only, counted from the stored rows when an address becomes tracked, and
// exact when that happens while a batch is still being stored.
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { shareLabelExposure } from "../../src/db/queries/risk-labels.ts";
import type { Transaction } from "../../src/domain/types.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { randomAddress } from "../helpers/chain.ts";
import { holdTransaction } from "../helpers/held-transaction.ts";
import { bearer, ingestTransactions, makeTransaction, trackWallet } from "../helpers/seed.ts";
import { waitFor } from "../helpers/wait.ts";

let t: TestApp;
let alice: string;
let ingestor: string;
beforeAll(async () => {
  t = await startTestApp("address-counters");
  [alice, ingestor] = await Promise.all([t.token("alice"), t.token("ingestor", "ingest:write")]);
});
afterAll(async () => {
  await t.close();
});

async function counterRow(address: string) {
  const [row] = await t.deps.sql<{ last: number; count: number }[]>`
    select last_activity::float8 as last, transaction_count::float8 as count from address_activity where address = ${address}`;
  return row;
}

/** What the API shows of the wallet: its lastActivity and its history's unfiltered total. */
async function shown(walletId: string) {
  const [detail, history] = await Promise.all([
    t.app.inject({ url: `/v1/wallets/${walletId}`, headers: bearer(alice) }),
    t.app.inject({ url: `/v1/transactions?walletId=${walletId}&limit=1`, headers: bearer(alice) }),
  ]);
  return { lastActivity: detail.json().lastActivity as string | null, total: history.json().total as number };
}

const iso = (blockTime: number) => new Date(blockTime * 1000).toISOString();

/** Transactions of `address` (both directions, one self-transfer) at blockTime from `from` on. */
function historyOf(address: string, count: number, from: number): Transaction[] {
  return Array.from({ length: count }, (_, i) =>
    makeTransaction(
      i === 0
        ? { from: address, to: address, blockTime: from }
        : i % 2 === 0
          ? { from: address, blockTime: from + i }
          : { to: address, blockTime: from + i },
    ),
  );
}

describe("address counters", () => {
  it("are kept for tracked addresses only", async () => {
    const tracked = await trackWallet(t, alice);
    const counterparty = randomAddress();
    await ingestTransactions(t, ingestor, [
      makeTransaction({ from: tracked.address, to: counterparty, blockTime: 1_700_000_100 }),
      makeTransaction({ from: counterparty, to: tracked.address, blockTime: 1_700_000_200 }),
    ]);
    expect(await counterRow(tracked.address)).toEqual({ last: 1_700_000_200, count: 2 });
    expect(await counterRow(counterparty)).toBeUndefined();
  });

  it("count what an address did before it was tracked, and count again when it is tracked anew", async () => {
    const address = randomAddress();
    await ingestTransactions(t, ingestor, historyOf(address, 7, 1_700_100_000));
    const wallet = await trackWallet(t, alice, { address });
    expect(await shown(wallet.walletId)).toEqual({ lastActivity: iso(1_700_100_006), total: 7 });

    // Untracked, it is no longer counted; tracked again, the counters are set from the rows.
    expect((await t.app.inject({ method: "DELETE", url: `/v1/wallets/${wallet.walletId}`, headers: bearer(alice) })).statusCode).toBe(204);
    await ingestTransactions(t, ingestor, historyOf(address, 4, 1_700_200_000));
    expect(await counterRow(address)).toEqual({ last: 1_700_100_006, count: 7 });
    const again = await trackWallet(t, alice, { address });
    expect(await shown(again.walletId)).toEqual({ lastActivity: iso(1_700_200_003), total: 11 });
  });

  it("include a batch that was still being stored when the address became tracked", async () => {
    // A tracked address whose counter row a second connection holds locked, so that the next
    // batch touching it waits inside its ingest transaction, its rows not yet committed.
    const blocker = await trackWallet(t, alice);
    await ingestTransactions(t, ingestor, [makeTransaction({ from: blocker.address, blockTime: 1_700_300_000 })]);
    const newcomer = randomAddress();
    await ingestTransactions(t, ingestor, historyOf(newcomer, 3, 1_700_300_000));

    // Its own connection: the app's small pool serves the ingest, the tracking and the probes.
    const holder = postgres(t.config.databaseUrl, { max: 1, onnotice: () => {} });
    const release = await holdTransaction(holder, (tx) => tx`select 1 from address_activity where address = ${blocker.address} for update`);
    try {
      const inFlight = [
        makeTransaction({ from: blocker.address, to: newcomer, blockTime: 1_700_300_100 }),
        ...historyOf(newcomer, 5, 1_700_300_200).slice(1),
      ];
      const ingesting = ingestTransactions(t, ingestor, inFlight);
      // The ingest statement, by its opening words: pg_stat_activity keeps a query's first 1 KiB only.
      await waitFor("the batch to wait for the locked counter", async () => (await waiting("Lock", "%with incoming as%")) > 0, 5_000);

      // Tracking now must wait for that batch; were it to count at once, it would miss the
      // batch's rows, and the batch (begun before the address was tracked) would not count them.
      const tracking = trackWallet(t, alice, { address: newcomer });
      let tracked = false;
      void tracking.then(() => (tracked = true));
      await waitFor("the tracking to wait for the batch", async () => tracked || (await waiting("Lock", "%pg_advisory_xact_lock%")) > 0, 5_000);
      await release();
      await ingesting;
      const wallet = await tracking;
      expect(await shown(wallet.walletId)).toEqual({ lastActivity: iso(1_700_300_204), total: 3 + 1 + 4 });
    } finally {
      await release();
      await holder.end();
    }
  });
});

describe("a tracking beside a label change", () => {
  it("ends with the label's factor whichever commits first: the label change waits for the tracking in flight", async () => {
    const address = randomAddress();
    const counterparty = randomAddress();
    await ingestTransactions(t, ingestor, [makeTransaction({ from: address, to: counterparty, blockTime: 1_700_400_000 })]);
    // The address's state row (a balance snapshot would make one), locked from a second
    // connection: the tracking stops there, after it has read the labels, before it commits.
    await t.deps.sql`insert into address_state (address) values (${address})`;
    const holder = postgres(t.config.databaseUrl, { max: 1, onnotice: () => {} });
    const release = await holdTransaction(holder, (tx) => tx`select 1 from address_state where address = ${address} for update`);
    try {
      const tracking = trackWallet(t, alice, { address });
      await waitFor("the tracking to wait for the state row", async () => (await waiting("Lock", "%address_state%for update%")) > 0, 5_000);

      // Were the label change not to wait, it would find no tracked wallet to rescore, and the
      // tracking, which read the labels before this one, would not score it either.
      const labelling = t.app.inject({
        method: "PUT",
        url: "/v1/risk/labels",
        headers: bearer(alice),
        payload: { labels: [{ address: counterparty, category: "mixer", score: 90 }] },
      });
      let labelled = false;
      void labelling.then(() => (labelled = true));
      await waitFor("the label change to wait for the tracking", async () => labelled || (await waiting("Lock", "%pg_advisory_xact_lock_shared%")) > 0, 5_000);
      await release();
      const wallet = await tracking;
      expect((await labelling).statusCode).toBe(200);
      const detail = await t.app.inject({ url: `/v1/wallets/${wallet.walletId}`, headers: bearer(alice) });
      expect(detail.json()).toMatchObject({ riskScore: 60, riskFactors: ["mixer_interaction"] });
    } finally {
      await release();
      await holder.end();
    }
  });
});

describe("a tracking waiting for a label change", () => {
  it("does not hold back the batches being ingested meanwhile", async () => {
    // A label change in flight, as far as the tracking can tell: its lock held shared, uncommitted.
    const holder = postgres(t.config.databaseUrl, { max: 1, onnotice: () => {} });
    const release = await holdTransaction(holder, shareLabelExposure);
    try {
      const tracking = trackWallet(t, alice);
      let tracked = false;
      void tracking.then(() => (tracked = true));
      await waitFor("the tracking to wait for the label change", async () => (await waiting("Lock", "%pg_advisory_xact_lock(%")) > 0, 5_000);
      // Were the tracking to take the counters' lock before waiting, this batch would wait too.
      expect(await ingestTransactions(t, ingestor, [makeTransaction({ blockTime: 1_700_500_000 })])).toMatchObject({ accepted: 1 });
      expect(tracked).toBe(false);
      await release();
      await tracking;
    } finally {
      await release();
      await holder.end();
    }
  });
});

/** Sessions of this database waiting on a lock of `type` while running a query like `pattern`. */
async function waiting(type: string, pattern: string): Promise<number> {
  const [row] = await t.deps.sql<{ n: number }[]>`
    select count(*)::int as n from pg_stat_activity
    where datname = current_database() and wait_event_type = ${type} and query ilike ${pattern}`;
  return row?.n ?? 0;
}
