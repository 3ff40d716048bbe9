// dormant_reactivation is about a wallet's keys being used again after a long silence: only
// its own sends (failed ones too) end a silence (README "Risk score"). Before, a stranger's
// 1-lamport transfer to a cold wallet silent for 91 days scored 15 and paged the owners of its
// risk_score_increase alerts, and a wallet that kept receiving deposits never counted as silent.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Transaction } from "../../src/domain/types.ts";
import type { RunningWorkers } from "../../src/queue/run-workers.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { randomAddress } from "../helpers/chain.ts";
import { eventsOf, startWorkers, tx } from "../helpers/pipeline.ts";
import { riskWatch, type RiskWatch } from "../helpers/risk-watch.ts";

let t: TestApp;
let workers: RunningWorkers;
let watch: RiskWatch;
let token: string;
const DAY = 86_400;
/** Four months ago: the silences below end before today. */
const start = Math.floor(Date.now() / 1000) - 120 * DAY;

beforeAll(async () => {
  t = await startTestApp("dormant-reactivation");
  workers = startWorkers(t);
  token = await t.token("alice");
  watch = riskWatch(t, token);
});
afterAll(async () => {
  await workers.close();
  await t.close();
});

const send = (from: string, blockTime: number, status: Transaction["status"] = "success") =>
  tx({ from, to: randomAddress(), amount: 1, token: "SOL", blockTime, status });
const receive = (to: string, blockTime: number, amount = 5) => tx({ from: randomAddress(), to, amount, token: "SOL", blockTime });

describe("dormant_reactivation", () => {
  it("leaves the score 0 and fires nothing for a 1-lamport transfer received by a wallet silent for 91 days", async () => {
    const wallet = await watch.watchedWallet();
    await watch.ingest([send(wallet.address, start)]);
    await watch.ingest([receive(wallet.address, start + 91 * DAY, 0.000000001)]);

    expect(await watch.riskOf(wallet.walletId)).toEqual({ riskScore: 0, riskFactors: [] });
    expect(await eventsOf(t, wallet.alertId)).toEqual([]);
  });

  it("raises the factor when a wallet that only received deposits for 91 days sends again", async () => {
    const wallet = await watch.watchedWallet();
    await watch.ingest([send(wallet.address, start)]);
    // A deposit every week: received, not sent, so the silence goes on.
    for (let week = 1; week <= 13; week++) await watch.ingest([receive(wallet.address, start + week * 7 * DAY)]);
    expect(await watch.riskOf(wallet.walletId)).toEqual({ riskScore: 0, riskFactors: [] });

    await watch.ingest([send(wallet.address, start + 92 * DAY)]);
    expect(await watch.riskOf(wallet.walletId)).toEqual({ riskScore: 15, riskFactors: ["dormant_reactivation"] });
    expect(await eventsOf(t, wallet.alertId)).toMatchObject([{ condition: "risk_score_increase", observed: 15 }]);
  });

  it("raises the factor for a failed send after 91 days of silence: the keys signed it", async () => {
    const wallet = await watch.watchedWallet();
    await watch.ingest([send(wallet.address, start)]);
    await watch.ingest([send(wallet.address, start + 91 * DAY, "failed")]);
    expect(await watch.riskOf(wallet.walletId)).toEqual({ riskScore: 15, riskFactors: ["dormant_reactivation"] });
  });
});
