// unusual_activity is edge-triggered, but an alert created, resumed or given a new threshold in
// the middle of a burst never saw that burst cross its limit: its first judgment fires when the
// trailing hour is at or over the limit already, once, and from then on only crossings fire.
// Edge-triggered alone, an analyst who lowered the threshold from 10 to 5 in an hour of 8
// transactions heard nothing of the 9th, nor of any until the hour fell below 5 and rose again.
// End to end: HTTP ingest and PATCH → Postgres → real workers and Redis counters → events.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningWorkers } from "../../src/queue/run-workers.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { createAlert, eventsOf, sendsAtMinutes, startWorkers, track } from "../helpers/pipeline.ts";
import { bearer } from "../helpers/seed.ts";

let t: TestApp;
let workers: RunningWorkers;
let token: string;
// Minute 0 of the scenarios, on a whole hour, two hours back.
const START = (Math.floor(Date.now() / 3_600_000) - 2) * 3_600;

beforeAll(async () => {
  t = await startTestApp("unusual-activity-armed");
  workers = startWorkers(t);
  token = await t.token("desk");
});
afterAll(async () => {
  await workers.close();
  await t.close();
});

/** One batch of sends from `wallet`, one at each of these minutes after START, evaluated before the next. */
const sendsAt = (wallet: string, minutes: number[]) => sendsAtMinutes(t, token, wallet, START, minutes);

async function patchAlert(alertId: string, payload: Record<string, unknown>): Promise<void> {
  const res = await t.app.inject({ method: "PATCH", url: `/v1/risk/alerts/${alertId}`, headers: bearer(token), payload });
  expect(res.statusCode).toBe(200);
}

const keysOf = async (alertId: string) => (await eventsOf(t, alertId)).map((event) => event.dedupeKey);

/** A quiet wallet (baseline floor 1 an hour) with 8 sends in the hour: a burst under way. */
async function walletEightSendsIn() {
  const wallet = await track(t, token);
  await sendsAt(wallet.address, [0, 1, 2, 3, 4, 5, 6, 7]);
  return wallet;
}

describe("unusual_activity judged once on a burst in progress after a create, resume or new threshold", () => {
  it("fires on the next transaction after the threshold is lowered from 10 to 5 mid-burst, then only on new crossings", async () => {
    const wallet = await track(t, token);
    const alertId = await createAlert(t, token, { walletId: wallet.walletId, condition: "unusual_activity", threshold: 10 });
    await sendsAt(wallet.address, [0, 1, 2, 3, 4, 5, 6, 7]);
    expect(await eventsOf(t, alertId)).toEqual([]);

    await patchAlert(alertId, { threshold: 5 });
    const [ninth] = await sendsAt(wallet.address, [8]);
    expect(await eventsOf(t, alertId)).toMatchObject([{ dedupeKey: ninth, condition: "unusual_activity", observed: 9 }]);

    // The burst is reported: neither its next transaction nor an edit that leaves the threshold
    // as it is (the same 5, a cooldown) pages it again.
    await sendsAt(wallet.address, [9]);
    await patchAlert(alertId, { threshold: 5, cooldownSeconds: 60 });
    await sendsAt(wallet.address, [10]);
    expect(await keysOf(alertId)).toEqual([ninth]);
  });

  it("fires on the next transaction of a burst that was under way when the alert was created", async () => {
    const wallet = await walletEightSendsIn();
    const alertId = await createAlert(t, token, { walletId: wallet.walletId, condition: "unusual_activity", threshold: 5 });
    const [ninth] = await sendsAt(wallet.address, [8]);
    await sendsAt(wallet.address, [9]);
    expect(await eventsOf(t, alertId)).toMatchObject([{ dedupeKey: ninth, observed: 9 }]);
  });

  it("fires on the next transaction of a burst that went over the limit while the alert was paused", async () => {
    const wallet = await track(t, token);
    const alertId = await createAlert(t, token, { walletId: wallet.walletId, condition: "unusual_activity", threshold: 5 });
    await patchAlert(alertId, { status: "paused" });
    await sendsAt(wallet.address, [0, 1, 2, 3, 4, 5, 6, 7]);
    await patchAlert(alertId, { status: "active" });
    const [ninth] = await sendsAt(wallet.address, [8]);
    await sendsAt(wallet.address, [9]);
    expect(await eventsOf(t, alertId)).toMatchObject([{ dedupeKey: ninth, observed: 9 }]);
  });

  it("fires on the crossing, as before, for an alert whose first judgment found the hour below its limit", async () => {
    const wallet = await track(t, token);
    const alertId = await createAlert(t, token, { walletId: wallet.walletId, condition: "unusual_activity", threshold: 5 });
    await sendsAt(wallet.address, [0, 1]);
    await sendsAt(wallet.address, [2, 3]);
    const [fifth] = await sendsAt(wallet.address, [4]);
    await sendsAt(wallet.address, [5]);
    expect(await eventsOf(t, alertId)).toMatchObject([{ dedupeKey: fifth, observed: 5 }]);
  });
});
