// Writes racing a delete of what they hang on: a create whose wallet, or a test notification
// whose alert, is being deleted in a transaction not yet committed. Either the delete commits
// first (404, nothing written, no quota spent) or the write does; never a 500. Real API and
// Postgres, the delete held open on a second session.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { archiveAlerts } from "../../src/db/queries/alert-archive.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { clockClearOfBoundary, HOUR_MS } from "../helpers/clock.ts";
import { holdTransaction, waitForALockWait } from "../helpers/held-transaction.ts";
import { bearer, expectProblem, trackWallet } from "../helpers/seed.ts";

let t: TestApp;
let token: string;

beforeAll(async () => {
  t = await startTestApp("delete-races", { TEST_NOTIFICATIONS_PER_HOUR: "1" }, { now: clockClearOfBoundary(HOUR_MS) });
  token = await t.token("alice");
});
afterAll(async () => {
  await t?.close();
});

const alertBody = (walletId: string) => ({
  walletId,
  condition: "large_transfer",
  threshold: 1_000,
  notificationMethod: "webhook",
  webhookUrl: "http://127.0.0.1:9/hook",
});

async function createAlert(walletId: string): Promise<string> {
  const res = await t.app.inject({ method: "POST", url: "/v1/risk/alerts", headers: bearer(token), payload: alertBody(walletId) });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().alertId;
}

/** Until a statement of the app's waits on a lock (the held delete's). */
const blockedOnALock = () => waitForALockWait(t.deps.sql);

describe("a write racing a delete that commits first", () => {
  it("answers a create whose wallet is being deleted with 404, and stores no alert", async () => {
    const wallet = await trackWallet(t, token);
    const release = await holdTransaction(t.deps.sql, (tx) => tx`delete from tracked_wallets where id = ${wallet.walletId}`);

    const creating = t.app.inject({ method: "POST", url: "/v1/risk/alerts", headers: bearer(token), payload: alertBody(wallet.walletId) });
    await blockedOnALock();
    await release();

    expectProblem(await creating, 404, "not_found");
    const [row] = await t.deps.sql<{ n: number }[]>`select count(*)::int as n from alerts where wallet_id = ${wallet.walletId}`;
    expect(row!.n).toBe(0);
  });

  it("answers a test of an alert being deleted with 404, and spends none of the hourly quota", async () => {
    const wallet = await trackWallet(t, token);
    const doomed = await createAlert(wallet.walletId);
    const kept = await createAlert(wallet.walletId);
    // As the API deletes it: archived, then deleted (the database refuses an unarchived delete).
    const release = await holdTransaction(t.deps.sql, async (tx) => {
      await archiveAlerts(tx, { owner: "alice", alertId: doomed }, { deletedBy: "alice", reason: "alert deleted" });
      await tx`delete from alerts where id = ${doomed}`;
    });

    const testing = t.app.inject({ method: "POST", url: `/v1/risk/alerts/${doomed}/test`, headers: bearer(token) });
    await blockedOnALock();
    await release();

    expectProblem(await testing, 404, "not_found");
    // The quota is one an hour: the refused test did not use it.
    const next = await t.app.inject({ method: "POST", url: `/v1/risk/alerts/${kept}/test`, headers: bearer(token) });
    expect(next.statusCode, next.body).toBe(202);
  });
});
