// A label change's rescore runs chunk by chunk, in address order, each chunk a transaction of its
// own (src/pipeline/relabel.ts): the chunks lock the wallets' scores in the order an evaluation
// locks them, and a chunk's locks last one chunk's time, not the whole rescore's.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pendingLabelRescores, trackedCounterpartiesOf } from "../../src/db/queries/risk-labels.ts";
import { recordLabels, rescoreRelabelled } from "../../src/pipeline/relabel.ts";
import { QUEUES } from "../../src/queue/names.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { walletsThatPaid as paidBy } from "../helpers/wallets-that-paid.ts";
import { randomAddress } from "../helpers/chain.ts";
import { holdTransaction, waitForALockWait } from "../helpers/held-transaction.ts";
import { waitFor } from "../helpers/pipeline.ts";

let t: TestApp;
let alice: string;

beforeAll(async () => {
  t = await startTestApp("relabel-chunks");
  alice = await t.token("alice");
});
afterAll(async () => {
  await t.close();
});

const WALLETS = 12;
const CHUNK = 3;

const walletsThatPaid = (hub: string) => paidBy(t, alice, hub, WALLETS);

/**
 * Labels `hub` sanctioned and runs its rescore in chunks of CHUNK while another transaction (an
 * evaluation, say) holds the score of `wallets[held]`: returns once the rescore waits for it, with
 * what each wallet looks like then to another session.
 */
async function rescoreWaitingOn(hub: string, wallets: string[], held: number) {
  const { rescoreId } = await recordLabels(t.deps, [{ address: hub, category: "sanctioned", score: 100, source: "ofac-sdn" }], "ops");
  const release = await holdTransaction(t.deps.sql, (tx) => tx`select 1 from address_state where address = ${wallets[held]!} for update`);
  const rescoring = rescoreRelabelled(t.deps, rescoreId!, CHUNK);
  await waitForALockWait(t.deps.sql, "the rescore to wait on the held score");

  const scores = new Map(
    (await t.deps.sql<{ address: string; score: number }[]>`
      select address, risk_score as score from address_state where address = any(${wallets})`).map((row) => [row.address, row.score]),
  );
  // The rows no other session holds: locked by this probe for an instant, then let go.
  const free = new Set(
    await t.deps.sql.begin(async (probe) =>
      (await probe<{ address: string }[]>`select address from address_state where address = any(${wallets}) for update skip locked`).map(
        (row) => row.address,
      ),
    ),
  );
  const seen = wallets.map((address) => ({ scored: scores.get(address) === 90, locked: !free.has(address) }));
  return { seen, release, rescoring };
}

describe("a label change's rescore in chunks", () => {
  it("looks up the wallets to rescore in address order", async () => {
    const hub = randomAddress();
    const wallets = await walletsThatPaid(hub);
    const affected = await t.deps.sql.begin((tx) => trackedCounterpartiesOf(tx, [hub]));
    expect(affected).toEqual(wallets);
  });

  it("rescores the chunks in address order: waiting on one wallet, it has reached every wallet before it and none after it", async () => {
    const hub = randomAddress();
    const wallets = await walletsThatPaid(hub);
    const held = 7;
    const { seen, release, rescoring } = await rescoreWaitingOn(hub, wallets, held);
    try {
      const reached = seen.map((wallet) => wallet.scored || wallet.locked);
      expect(reached).toEqual(wallets.map((_, i) => i <= held));
    } finally {
      await release();
      await rescoring;
    }
    const [row] = await t.deps.sql<{ n: number }[]>`
      select count(*)::int as n from address_state where address = any(${wallets}) and risk_score = 90`;
    expect(row!.n).toBe(WALLETS);
  });

  it("commits each chunk on its own: while it waits on a later wallet, the earlier chunks' scores are written and no longer locked", async () => {
    const hub = randomAddress();
    const wallets = await walletsThatPaid(hub);
    // The last wallet of the third chunk: two chunks are done, the third holds its first two wallets.
    const held = 3 * CHUNK - 1;
    const { seen, release, rescoring } = await rescoreWaitingOn(hub, wallets, held);
    try {
      expect(seen.slice(0, 2 * CHUNK)).toEqual(Array.from({ length: 2 * CHUNK }, () => ({ scored: true, locked: false })));
      // The chunk under way: its wallets locked, not yet committed.
      expect(seen.slice(2 * CHUNK, held + 1)).toEqual(Array.from({ length: CHUNK }, () => ({ scored: false, locked: true })));
      expect(seen.slice(held + 1)).toEqual(Array.from({ length: WALLETS - held - 1 }, () => ({ scored: false, locked: false })));
      // The owed rescore's record stays until the last chunk commits.
      expect(await t.deps.sql`select 1 from label_rescores`).toHaveLength(1);
    } finally {
      await release();
    }
    const result = await rescoring;
    expect(result.rescored).toBe(WALLETS);
    expect(await t.deps.sql`select 1 from label_rescores`).toHaveLength(0);
  });

  it("is never taken over by the reconciler while one of its chunks is under way, however long the chunk runs: the sweep passes it by and the first run finishes alone", async () => {
    const hub = randomAddress();
    const wallets = await walletsThatPaid(hub);
    const { rescoreId } = await recordLabels(t.deps, [{ address: hub, category: "sanctioned", score: 100, source: "ofac-sdn" }], "ops");
    await t.deps.sql`update label_rescores set created_at = now() - interval '1 hour' where id = ${rescoreId!}`;

    const release = await holdTransaction(t.deps.sql, (tx) => tx`select 1 from address_state where address = ${wallets[CHUNK + 1]!} for update`);
    const first = rescoreRelabelled(t.deps, rescoreId!, CHUNK);
    await waitForALockWait(t.deps.sql, "the rescore's second chunk to wait on the held score");
    // The sweep's take-over, as if the chunk under way had outlived the grace period: it does not wait for it.
    const sweep = await rescoreRelabelled(t.deps, rescoreId!, CHUNK, new Date(Date.now() + 60_000));
    expect(sweep).toEqual({ rescored: 0, scoreChangeIds: [] });
    await release();

    expect((await first).rescored).toBe(WALLETS);
    const history = await t.deps.sql<{ n: number }[]>`
      select count(*)::int as n from risk_score_history where address = any(${wallets}) group by address`;
    expect(history.map((row) => row.n)).toEqual(wallets.map(() => 1));
    expect(await t.deps.sql`select 1 from label_rescores`).toHaveLength(0);
  });

  it("keeps its record out of the reconciler's hands while chunks commit; a second run takes it over and the first stops, each wallet rescored once", async () => {
    const hub = randomAddress();
    const wallets = await walletsThatPaid(hub);
    const { rescoreId } = await recordLabels(t.deps, [{ address: hub, category: "sanctioned", score: 100, source: "ofac-sdn" }], "ops");
    // As if the change had been recorded long ago (its process ended): the reconciler's to take.
    await t.deps.sql`update label_rescores set created_at = now() - interval '1 hour' where id = ${rescoreId!}`;
    expect(await pendingLabelRescores(t.deps.sql, new Date(Date.now() - 5_000), 10)).toEqual([rescoreId]);

    const release = await holdTransaction(t.deps.sql, (tx) => tx`select 1 from address_state where address = ${wallets[3 * CHUNK - 1]!} for update`);
    const first = rescoreRelabelled(t.deps, rescoreId!, CHUNK);
    await waitForALockWait(t.deps.sql, "the rescore to wait on the held score");
    // Two chunks committed, each renewing the record's lease: a sweep now leaves it alone.
    expect(await pendingLabelRescores(t.deps.sql, new Date(Date.now() - 5_000), 10)).toEqual([]);

    // Taken all the same (a chunk that ran past the grace period): the second run waits for the chunk under way.
    const second = rescoreRelabelled(t.deps, rescoreId!, CHUNK);
    await waitFor("the second run to wait for the record", async () => {
      const [row] = await t.deps.sql<{ waiting: number }[]>`
        select count(*)::int as waiting from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`;
      return row!.waiting >= 2;
    });
    await release();
    const [a, b] = await Promise.all([first, second]);

    expect(a.rescored + b.rescored).toBe(WALLETS);
    const history = await t.deps.sql<{ n: number }[]>`
      select count(*)::int as n from risk_score_history where address = any(${wallets}) group by address`;
    expect(history.map((row) => row.n)).toEqual(wallets.map(() => 1));
    expect(await t.deps.sql`select 1 from label_rescores`).toHaveLength(0);
  });

  it("rescores every chunk when the rises cannot be enqueued (Redis down), and throws once it is done: the changes are left to the reconciler", async () => {
    const hub = randomAddress();
    const wallets = await walletsThatPaid(hub);
    const { rescoreId } = await recordLabels(t.deps, [{ address: hub, category: "mixer", score: 90, source: "vendor-x" }], "ops");
    let attempts = 0;
    const down = {
      addBulk: async () => {
        attempts++;
        throw new Error("Redis is down");
      },
    };
    const queues = { ...t.deps.queues, [QUEUES.risk]: down } as unknown as typeof t.deps.queues;
    await expect(rescoreRelabelled({ sql: t.deps.sql, queues }, rescoreId!, CHUNK)).rejects.toThrow("Redis is down");
    // Tried once, not once per chunk: the rest is the reconciler's.
    expect(attempts).toBe(1);
    const rows = await t.deps.sql<{ score: number; owed: boolean }[]>`
      select s.risk_score as score, h.evaluated_at is null as owed
      from address_state s join risk_score_history h on h.address = s.address
      where s.address = any(${wallets})`;
    expect(rows).toEqual(wallets.map(() => ({ score: 60, owed: true })));
    expect(await t.deps.sql`select 1 from label_rescores`).toHaveLength(0);
  });
});
