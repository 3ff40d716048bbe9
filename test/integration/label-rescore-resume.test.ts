// A label change's rescore runs in chunks, each committed on its own, and each records the last
// wallet it rescored (src/pipeline/relabel.ts): when the process ends mid-rescore, the reconciler
// takes the rescore over and continues after the last chunk that committed, instead of starting
// again from the first chunk (minutes of work again after a large import).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runReconcileOnce } from "../../src/pipeline/reconcile.ts";
import { recordLabels, rescoreRelabelled } from "../../src/pipeline/relabel.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { walletsThatPaid as paidBy } from "../helpers/wallets-that-paid.ts";
import { randomAddress } from "../helpers/chain.ts";
import { holdTransaction, waitForALockWait } from "../helpers/held-transaction.ts";
import { waitFor } from "../helpers/pipeline.ts";

let t: TestApp;
let alice: string;

beforeAll(async () => {
  t = await startTestApp("label-rescore-resume");
  alice = await t.token("alice");
});
afterAll(async () => {
  await t.close();
});

const WALLETS = 10;
/** Four chunks: 3, 3, 3 and 1 wallets. */
const CHUNK = 3;

const walletsThatPaid = (hub: string) => paidBy(t, alice, hub, WALLETS);

/** Labels `hub` sanctioned: the rescore owed, and the load that owes it. */
async function sanctionLoad(hub: string) {
  const recorded = await recordLabels(t.deps, [{ address: hub, category: "sanctioned", score: 100, source: "ofac-sdn" }], "ops");
  return { rescoreId: recorded.rescoreId!, loadId: recorded.loadId };
}

const sanction = async (hub: string) => (await sanctionLoad(hub)).rescoreId;

/** Each wallet's score and factors, and its score changes, in the order of `wallets`. */
async function stateOf(wallets: string[]) {
  const scores = await t.deps.sql<{ address: string; score: number; factors: string[] }[]>`
    select address, risk_score as score, risk_factors as factors from address_state where address = any(${wallets})`;
  const changes = await t.deps.sql<{ address: string; previousScore: number; score: number; cause: string }[]>`
    select address, previous_score as "previousScore", score, cause from risk_score_history
    where address = any(${wallets}) order by id`;
  return wallets.map((address) => {
    const { score, factors } = scores.find((row) => row.address === address)!;
    return {
      score,
      factors,
      changes: changes.filter((row) => row.address === address).map(({ previousScore, score, cause }) => ({ previousScore, score, cause })),
    };
  });
}

/**
 * Runs the rescore until its second chunk waits on a wallet that another transaction holds, then
 * cancels its statement there, which ends the run as a process ending mid-rescore would: the first
 * chunk committed, the second rolled back, the record left behind.
 */
async function rescoreEndingInSecondChunk(rescoreId: number, wallets: string[]): Promise<void> {
  const release = await holdTransaction(t.deps.sql, (held) => held`select 1 from address_state where address = ${wallets[CHUNK]!} for update`);
  try {
    const rescoring = rescoreRelabelled(t.deps, rescoreId, CHUNK);
    // Expected before the cancel is sent: the rescore's rejection may arrive before the cancel's
    // own answer, and a rejection with no handler yet fails the run as unhandled (seen in CI).
    const cancelled = expect(rescoring).rejects.toThrow(/cancel/);
    await waitForALockWait(t.deps.sql, "the rescore's second chunk to wait on the held wallet");
    await t.deps.sql`
      select pg_cancel_backend(pid) from pg_stat_activity
      where datname = current_database() and wait_event_type = 'Lock'`;
    await cancelled;
  } finally {
    await release();
  }
}

describe("a label change's rescore taken over after its process ended", () => {
  it("continues after the last chunk that committed: the first chunk's wallets are neither locked nor rescored again, the rest are, as an uninterrupted rescore leaves them", async () => {
    const hub = randomAddress();
    const wallets = await walletsThatPaid(hub);
    const { rescoreId, loadId } = await sanctionLoad(hub);

    await rescoreEndingInSecondChunk(rescoreId, wallets);
    const scored = (await stateOf(wallets)).map((wallet) => wallet.score > 0);
    expect(scored).toEqual(wallets.map((_, i) => i < CHUNK));
    expect(await t.deps.sql`select 1 from label_rescores where id = ${rescoreId}`).toHaveLength(1);

    // An evaluation of a first-chunk wallet holds its score while the reconciler takes the rescore
    // over: a take-over that started again from the first chunk would wait for it.
    const release = await holdTransaction(t.deps.sql, (held) => held`select 1 from address_state where address = ${wallets[0]!} for update`);
    let finished = false;
    const takeOver = runReconcileOnce({ ...t.deps, now: () => new Date(Date.now() + 60_000) }, { graceMs: 0 }).finally(() => {
      finished = true;
    });
    try {
      const outcome = await waitFor("the take-over to finish, or to wait on the held wallet", async () => {
        if (finished) return "finished";
        const [row] = await t.deps.sql<{ waiting: number }[]>`
          select count(*)::int as waiting from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`;
        return row!.waiting > 0 ? "waited on a first-chunk wallet" : false;
      });
      expect(outcome).toBe("finished");
    } finally {
      await release();
    }
    expect((await takeOver).labelRescores).toBe(1);
    expect(await t.deps.sql`select 1 from label_rescores where id = ${rescoreId}`).toHaveLength(0);

    // The same change to other wallets, rescored without a break.
    const otherHub = randomAddress();
    const others = await walletsThatPaid(otherHub);
    await rescoreRelabelled(t.deps, await sanction(otherHub), CHUNK);
    const uninterrupted = await stateOf(others);
    expect(uninterrupted.every((wallet) => wallet.score > 0 && wallet.changes.length === 1)).toBe(true);
    // Each change names the load that owed it, the one the reconciler finished too.
    const resumed = await stateOf(wallets);
    expect(resumed.flatMap((wallet) => wallet.changes.map((change) => change.cause))).toEqual(wallets.map(() => `labels:${loadId}`));
    const withoutCause = (states: typeof resumed) => states.map((state) => ({ ...state, changes: state.changes.map(({ cause: _cause, ...rest }) => rest) }));
    expect(withoutCause(resumed)).toEqual(withoutCause(uninterrupted));
  });
});
