// unusual_activity's limit moves at each hour boundary (the baseline is the 7 days before the
// hour, [h−169, h−2]): when a busy hour leaves the baseline, the limit falls. A burst under way
// then finds the trailing hour over the new limit before its next transaction: judged against
// the new hour's limit alone, the count "before" it was over already, no crossing was seen and
// the burst was never reported (the semantics review's t17). The edge is between consecutive
// verdicts: the previous transaction's count against the limit of its own hour.
// End to end: HTTP ingest → Postgres → real workers and Redis counters → alert events.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningWorkers } from "../../src/queue/run-workers.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { randomAddress } from "../helpers/chain.ts";
import { createAlert, eventsOf, settled, startWorkers, track, tx } from "../helpers/pipeline.ts";
import { ingestTransactions } from "../helpers/seed.ts";

let t: TestApp;
let workers: RunningWorkers;
let token: string;
const HOUR = 3_600;
// The burst's first hour h1, a day and more back, so that every hour of the scenario is whole.
const H1 = Math.floor(Date.now() / 3_600_000) - 30;

beforeAll(async () => {
  t = await startTestApp("unusual-activity-hour-boundary");
  workers = startWorkers(t);
  token = await t.token("desk");
});
afterAll(async () => {
  await workers.close();
  await t.close();
});

/** One batch of transfers to `wallet` at these block times, evaluated before it returns; their signatures. */
async function receivesAt(wallet: string, blockTimes: number[]): Promise<string[]> {
  const txs = blockTimes.map((blockTime) => tx({ from: randomAddress(), to: wallet, amount: 1, blockTime }));
  await ingestTransactions(t, token, txs);
  await settled(t);
  return txs.map((item) => item.signature);
}

/**
 * A wallet whose baseline is 4 an hour for hour h1 (672 transactions in hour h1−169, its oldest
 * hour) and the floor of 1 for hour h1+1 (that hour has left it), with unusual_activity at 5×:
 * the limit is 20 in hour h1 and 5 in hour h1+1.
 */
async function walletWhoseLimitFalls(): Promise<{ address: string; alertId: string }> {
  const wallet = await track(t, token);
  await receivesAt(wallet.address, Array.from({ length: 672 }, (_, i) => (H1 - 169) * HOUR + i * 5));
  const alertId = await createAlert(t, token, { walletId: wallet.walletId, condition: "unusual_activity", threshold: 5 });
  return { address: wallet.address, alertId };
}

const minutesOfH1 = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => H1 * HOUR + (from + i) * 60);

describe("unusual_activity when the limit falls at an hour boundary during a burst", () => {
  it("fires on the first transaction of the next hour, batch by batch (10 under a limit of 20, then 11 against 5)", async () => {
    const { address, alertId } = await walletWhoseLimitFalls();
    for (const blockTime of minutesOfH1(50, 59)) await receivesAt(address, [blockTime]);
    expect(await eventsOf(t, alertId)).toEqual([]);

    const [eleventh] = await receivesAt(address, [(H1 + 1) * HOUR]);
    await receivesAt(address, [(H1 + 1) * HOUR + 60]);
    expect(await eventsOf(t, alertId)).toMatchObject([{ dedupeKey: eleventh, condition: "unusual_activity", observed: 11 }]);
  });

  it("fires on the first transaction of the next hour when the burst came in one batch", async () => {
    const { address, alertId } = await walletWhoseLimitFalls();
    await receivesAt(address, minutesOfH1(50, 59));
    const [eleventh] = await receivesAt(address, [(H1 + 1) * HOUR]);
    expect(await eventsOf(t, alertId)).toMatchObject([{ dedupeKey: eleventh, observed: 11 }]);
  });

  it("fires once for a burst reported in the hour whose limit is lower, and the next hour's transactions add nothing", async () => {
    const { address, alertId } = await walletWhoseLimitFalls();
    await receivesAt(address, minutesOfH1(50, 59));
    const [eleventh] = await receivesAt(address, [(H1 + 1) * HOUR]);
    await receivesAt(address, [(H1 + 1) * HOUR + 60, (H1 + 1) * HOUR + 120]);
    await receivesAt(address, [(H1 + 1) * HOUR + 180]);
    expect((await eventsOf(t, alertId)).map((event) => event.dedupeKey)).toEqual([eleventh]);
  });
});
