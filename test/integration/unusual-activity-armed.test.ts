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

// An armed judgment fires for a burst the alert never reported: a pause and resume, or a new
// threshold, in the middle of a burst it fired on paged that burst again (the semantics review's
// t13). The rule: not when the alert has an event on a transaction dated within an hour of the
// minute judged.
describe("unusual_activity armed again in the middle of a burst it reported", () => {
  /** A quiet wallet with unusual_activity at 5×, fired at minute 4 of a burst of sends at minutes 0–5. */
  async function burstReported() {
    const wallet = await track(t, token);
    const alertId = await createAlert(t, token, { walletId: wallet.walletId, condition: "unusual_activity", threshold: 5 });
    const [, , , , fifth] = await sendsAt(wallet.address, [0, 1, 2, 3, 4, 5]);
    expect(await keysOf(alertId)).toEqual([fifth]);
    return { address: wallet.address, alertId, fifth: fifth! };
  }

  it("fires nothing more for the burst after a pause and resume", async () => {
    const { address, alertId, fifth } = await burstReported();
    await patchAlert(alertId, { status: "paused" });
    await patchAlert(alertId, { status: "active" });
    await sendsAt(address, [6]);
    await sendsAt(address, [7]);
    expect(await keysOf(alertId)).toEqual([fifth]);
  });

  it("fires nothing more for the burst after its threshold is raised, or lowered, while it is over both", async () => {
    const { address, alertId, fifth } = await burstReported();
    await patchAlert(alertId, { threshold: 6 });
    await sendsAt(address, [6]);
    await patchAlert(alertId, { threshold: 4 });
    await sendsAt(address, [7]);
    expect(await keysOf(alertId)).toEqual([fifth]);
  });

  it("fires for a burst an hour after the one it reported, which went over the limit while it was paused", async () => {
    const { address, alertId, fifth } = await burstReported();
    await patchAlert(alertId, { status: "paused" });
    await sendsAt(address, [70, 71, 72, 73, 74, 75, 76, 77]);
    await patchAlert(alertId, { status: "active" });
    const [next] = await sendsAt(address, [78]);
    expect(await eventsOf(t, alertId)).toMatchObject([{ dedupeKey: fifth }, { dedupeKey: next, observed: 9 }]);
  });
});

describe("unusual_activity's reason for a burst judged at the wallet's newest minute", () => {
  it("names the hour to the wallet's newest minute, not the late transaction the event is on (the semantics review's t18)", async () => {
    const wallet = await track(t, token);
    await sendsAt(wallet.address, [100, 101, 102, 103, 104, 105, 106, 107]);
    const alertId = await createAlert(t, token, { walletId: wallet.walletId, condition: "unusual_activity", threshold: 5 });
    const [late] = await sendsAt(wallet.address, [0]);
    const events = await t.deps.sql<Array<{ dedupeKey: string; reason: string }>>`
      select dedupe_key as "dedupeKey", reason from alert_events where alert_id = ${alertId}`;
    const newest = new Date((START + 107 * 60) * 1000);
    const hourTo = `${newest.toISOString().slice(0, 10)} ${newest.toISOString().slice(11, 16)}`;
    expect(events).toHaveLength(1);
    expect(events[0]!.dedupeKey).toBe(late);
    expect(events[0]!.reason).toMatch(new RegExp(`^8 transactions in the hour to (${hourTo}|${hourTo.slice(11)}) UTC, 8× `));
  });
});
