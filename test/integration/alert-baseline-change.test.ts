// A risk_score_increase alert keeps, when it is created or resumed, the newest score change of
// its address (baseline_change_id): the changes up to it are in its baseline score already.
// The newest is the highest id: ids are drawn while the address's score is locked, so they
// follow the order the changes were made in. created_at does not: it is the writing
// transaction's start (now()), shared by every change that transaction writes, and a
// transaction that began before another's may write its change after it (an evaluation group
// begins with its claim, and a relabel chunk can commit a change of the same address meanwhile).
// An alert that kept such an older change would judge the newer one, already in its baseline,
// as a rise of its own.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { insertScoreHistory, type NewHistory } from "../../src/db/queries/pipeline-writes.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { createAlert, track } from "../helpers/pipeline.ts";
import { bearer } from "../helpers/seed.ts";

let t: TestApp;
let alice: string;

beforeAll(async () => {
  t = await startTestApp("alert-baseline-change");
  alice = await t.token("alice");
});
afterAll(async () => {
  await t.close();
});

const change = (address: string, previousScore: number, score: number): NewHistory => ({
  address,
  previousScore,
  score,
  factors: ["flagged_counterparty"],
  cause: "labels",
});

async function baselineChangeOf(alertId: string): Promise<number> {
  const [row] = await t.deps.sql<{ id: number }[]>`select baseline_change_id::float8 as id from alerts where id = ${alertId}`;
  return row!.id;
}

async function createdAtOf(ids: number[]): Promise<number[]> {
  const rows = await t.deps.sql<{ id: number; at: number }[]>`
    select id::float8 as id, extract(epoch from created_at)::float8 as at from risk_score_history where id = any(${ids}::bigint[])`;
  return ids.map((id) => rows.find((row) => row.id === id)!.at);
}

/**
 * Two changes written by one transaction (one created_at), then one by a transaction that began
 * before it and wrote after it commits: the newest change is the last one, with the oldest created_at.
 */
async function changesOutOfCreationOrder(address: string): Promise<{ sameTransaction: number[]; latest: number }> {
  let begun!: () => void;
  const hasBegun = new Promise<void>((resolve) => (begun = resolve));
  let committed!: () => void;
  const otherCommitted = new Promise<void>((resolve) => (committed = resolve));
  const early = t.deps.sql.begin(async (tx) => {
    await tx`select 1`;
    begun();
    await otherCommitted;
    // Written evaluated, the others not: the newest is not among the changes still owed an evaluation either.
    return insertScoreHistory(tx, [change(address, 40, 60)], new Date());
  });
  await hasBegun;
  const sameTransaction = await t.deps.sql.begin((tx) => insertScoreHistory(tx, [change(address, 0, 30), change(address, 30, 40)], null));
  committed();
  const [latest] = await early;
  return { sameTransaction, latest: latest! };
}

describe("the score change a risk_score_increase alert starts after", () => {
  it("is the address's newest change when the alert is created, though an older one has a later created_at", async () => {
    const wallet = await track(t, alice);
    const { sameTransaction, latest } = await changesOutOfCreationOrder(wallet.address);
    const [tiedAt, alsoTiedAt, latestAt] = await createdAtOf([...sameTransaction, latest]);
    // The shape that makes the newest change hard to find: a tie of created_at, and the newest created earliest.
    expect(tiedAt).toBe(alsoTiedAt);
    expect(latestAt).toBeLessThan(tiedAt!);
    expect(latest).toBeGreaterThan(Math.max(...sameTransaction));

    const alertId = await createAlert(t, alice, { walletId: wallet.walletId, condition: "risk_score_increase", threshold: 10 });
    expect(await baselineChangeOf(alertId)).toBe(latest);
  });

  it("is the newest of the changes made while the alert was paused when it is resumed, among changes of one created_at", async () => {
    const wallet = await track(t, alice);
    const alertId = await createAlert(t, alice, { walletId: wallet.walletId, condition: "risk_score_increase", threshold: 10 });
    const paused = await t.app.inject({ method: "PATCH", url: `/v1/risk/alerts/${alertId}`, headers: bearer(alice), payload: { status: "paused" } });
    expect(paused.statusCode).toBe(200);
    const ids = await t.deps.sql.begin((tx) =>
      insertScoreHistory(tx, [change(wallet.address, 0, 30), change(wallet.address, 30, 40), change(wallet.address, 40, 60)], new Date()),
    );
    expect(new Set(await createdAtOf(ids)).size).toBe(1);

    const resumed = await t.app.inject({ method: "PATCH", url: `/v1/risk/alerts/${alertId}`, headers: bearer(alice), payload: { status: "active" } });
    expect(resumed.statusCode).toBe(200);
    expect(await baselineChangeOf(alertId)).toBe(Math.max(...ids));
  });
});
