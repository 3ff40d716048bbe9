// unusual_activity and a transaction delivered late, end to end (HTTP ingest → Postgres → real
// workers and Redis counters → alert events): a late transaction that joins a burst already
// over the limit at the wallet's newest minute does not page the burst a second time; one that
// completes a burst of the past, with the wallet quiet now, still fires.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningWorkers } from "../../src/queue/run-workers.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { createAlert, eventsOf, sendsAtMinutes, startWorkers, track } from "../helpers/pipeline.ts";

let t: TestApp;
let workers: RunningWorkers;
let token: string;
// Minute 0 of the scenarios, on a whole hour, two hours back.
const START = (Math.floor(Date.now() / 3_600_000) - 2) * 3_600;

beforeAll(async () => {
  t = await startTestApp("late-burst");
  workers = startWorkers(t);
  token = await t.token("desk");
});
afterAll(async () => {
  await workers.close();
  await t.close();
});

/** One batch of sends from `wallet`, one at each of these minutes after START, evaluated before the next. */
const sendsAt = (wallet: string, minutes: number[]) => sendsAtMinutes(t, token, wallet, START, minutes);

/** A quiet wallet (baseline floor 1 an hour) with unusual_activity at 5×: the fifth transaction in an hour fires. */
async function quietWalletWithAlert() {
  const wallet = await track(t, token);
  const alertId = await createAlert(t, token, { walletId: wallet.walletId, condition: "unusual_activity", threshold: 5 });
  return { address: wallet.address, alertId };
}

describe("unusual_activity and a late transaction", () => {
  it("pages a burst once when a late send joins it while the hour at the newest minute is still over the limit", async () => {
    const { address, alertId } = await quietWalletWithAlert();
    await sendsAt(address, [0, 1, 2, 3]);
    const [fifth] = await sendsAt(address, [30]);
    expect(await eventsOf(t, alertId)).toMatchObject([{ dedupeKey: fifth, observed: 5 }]);

    // Dated minute 4: at its own minute the hour goes from 4 to 5, but at minute 30 it was 5 already.
    await sendsAt(address, [4]);
    expect((await eventsOf(t, alertId)).map((event) => event.dedupeKey)).toEqual([fifth]);
  });

  it("fires on a late send that completes a burst of the past while the wallet's newest hour is below the limit", async () => {
    const { address, alertId } = await quietWalletWithAlert();
    await sendsAt(address, [0, 1, 2, 3]);
    await sendsAt(address, [100]);
    expect(await eventsOf(t, alertId)).toEqual([]);

    const [late] = await sendsAt(address, [4]);
    expect(await eventsOf(t, alertId)).toMatchObject([{ dedupeKey: late, observed: 5 }]);
  });
});
