// End to end through the real path: HTTP ingest → Postgres → `transactions` job → real
// BullMQ worker → alert_events and notifications. One table-driven case per condition.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { NotificationPayload, Transaction } from "../../src/domain/types.ts";
import type { RunningWorkers } from "../../src/queue/run-workers.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { MINTS, randomAddress } from "../helpers/chain.ts";
import { createAlert, eventsOf, putLabels, settled, startWorkers, track, tx, type AlertBody } from "../helpers/pipeline.ts";
import { ingestTransactions } from "../helpers/seed.ts";

let t: TestApp;
let workers: RunningWorkers;
let token: string;
const now = Math.floor(Date.now() / 1000);

beforeAll(async () => {
  t = await startTestApp("pipeline-conditions");
  workers = startWorkers(t);
  token = await t.token("alice");
});
afterAll(async () => {
  await workers.close();
  await t.close();
});

type Case = {
  name: string;
  alert: Omit<AlertBody, "walletId">;
  /** Labels to load first, keyed by the role of the address. */
  labels?: Array<{ who: "mixer" | "sanctioned"; category: string; score: number }>;
  /** The wallet is `me`; other parties are fresh addresses unless named. */
  transactions: (me: string, parties: Record<"mixer" | "sanctioned" | "other", string>) => Transaction[];
  /** Expected events: index of the firing transaction (or "score"), the observed value and, where it matters, the reason. */
  expected: Array<{ at: number | "score"; observed: number; reason?: (txs: Transaction[]) => string | RegExp }>;
};

/** "05:54" of a block time, as an unusual_activity reason names the end of a late burst's hour. */
const hhmm = (blockTime: number) => new Date(blockTime * 1000).toISOString().slice(11, 16);

const cases: Case[] = [
  {
    name: "large_transfer fires on an amount at or above the threshold, in either direction",
    alert: { condition: "large_transfer", threshold: 1000 },
    transactions: (me, p) => [
      tx({ from: me, to: p.other, amount: 999.99, blockTime: now }),
      tx({ from: p.other, to: me, amount: 1000, blockTime: now + 1 }),
      tx({ from: me, to: p.other, amount: 5000, blockTime: now + 2, status: "failed" }),
      tx({ from: me, to: p.other, amount: 2500, blockTime: now + 3, type: "swap" }),
    ],
    expected: [
      { at: 1, observed: 1000 },
      { at: 3, observed: 2500 },
    ],
  },
  {
    name: "large_transfer with a token fires only for that token (by symbol or mint)",
    alert: { condition: "large_transfer", threshold: 100, token: "USDC" },
    transactions: (me, p) => [
      tx({ from: me, to: p.other, amount: 5000, token: "SOL", blockTime: now }),
      tx({ from: me, to: p.other, amount: 150, token: "USDC", mint: MINTS.USDC, blockTime: now + 1 }),
      tx({ from: me, to: p.other, amount: 150, token: "BONK", mint: MINTS.BONK, blockTime: now + 2 }),
    ],
    expected: [{ at: 1, observed: 150 }],
  },
  {
    name: "suspicious_counterparty fires on a labelled counterparty at or above the threshold",
    alert: { condition: "suspicious_counterparty", threshold: 75 },
    labels: [{ who: "sanctioned", category: "sanctioned", score: 95 }],
    transactions: (me, p) => [
      tx({ from: me, to: p.other, blockTime: now }),
      tx({ from: me, to: p.sanctioned, blockTime: now + 1 }),
      tx({ from: p.sanctioned, to: me, blockTime: now + 2, status: "failed" }),
    ],
    expected: [
      { at: 1, observed: 95 },
      { at: 2, observed: 95 },
    ],
  },
  {
    name: "unusual_activity fires once when the hour's count crosses threshold × baseline",
    alert: { condition: "unusual_activity", threshold: 5 },
    // A new wallet's baseline is the floor of 1 per hour: the 5th transaction crosses 5×.
    transactions: (me, p) => Array.from({ length: 8 }, (_, i) => tx({ from: me, to: p.other, blockTime: now + i * 60 })),
    // Judged at once: "the last hour"; the floor is said to be one, not "the usual 1 per hour".
    expected: [{ at: 4, observed: 5, reason: () => "5 transactions in the last hour, 5× the floor of 1 per hour (no earlier activity, threshold 5×)." }],
  },
  {
    name: "unusual_activity judges a burst against the 7 days before its own hour, though its batch reaches hours later",
    alert: { condition: "unusual_activity", threshold: 5 },
    // Measured from the batch's newest transaction, the 400 of the burst would be in their own
    // baseline (400 / 168 an hour): the limit crossed at the 12th transaction, not the 5th.
    // Four hours back, so that the last one, three hours after the burst, is not ahead of the clock.
    transactions: (me, p) => [
      ...Array.from({ length: 400 }, (_, i) => tx({ from: me, to: p.other, blockTime: now - 4 * 3600 + i })),
      tx({ from: me, to: p.other, blockTime: now - 3600 }),
    ],
    // Judged four hours after it: the burst is named by the end of its hour, not as "the last hour".
    expected: [
      {
        at: 4,
        observed: 5,
        reason: (txs) =>
          new RegExp(`^5 transactions in the hour to (\\d{4}-\\d\\d-\\d\\d )?${hhmm(txs[4]!.blockTime)} UTC, 5× the floor of 1 per hour \\(no earlier activity, threshold 5×\\)\\.$`),
      },
    ],
  },
  {
    name: "risk_score_increase fires when dealing with a mixer raises the wallet's score",
    alert: { condition: "risk_score_increase", threshold: 10 },
    labels: [{ who: "mixer", category: "mixer", score: 90 }],
    transactions: (me, p) => [tx({ from: me, to: p.mixer, amount: 3, blockTime: now })],
    // mixer_interaction weighs 0.6: the score goes from 0 to 60.
    expected: [{ at: "score", observed: 60 }],
  },
];

describe("each condition, from HTTP ingest to alert events", () => {
  for (const c of cases) {
    it(c.name, async () => {
      const wallet = await track(t, token, randomAddress(), "Treasury");
      const parties = { mixer: randomAddress(), sanctioned: randomAddress(), other: randomAddress() };
      if (c.labels) {
        const res = await putLabels(t, token, c.labels.map((l) => ({ address: parties[l.who], category: l.category, score: l.score })));
        expect(res.statusCode).toBe(200);
      }
      const alertId = await createAlert(t, token, { walletId: wallet.walletId, ...c.alert });
      const txs = c.transactions(wallet.address, parties);
      await ingestTransactions(t, token, txs);
      await settled(t);

      // Events of one batch share their creation time: compare in the transactions' order.
      const position = (key: string) => txs.findIndex((x) => x.signature === key);
      const events = (await eventsOf(t, alertId)).sort((a, b) => position(a.dedupeKey) - position(b.dedupeKey));
      expect(events.map((e) => ({ key: e.dedupeKey, observed: e.observed, suppressed: e.suppressed }))).toEqual(
        c.expected.map((e) => ({
          key: e.at === "score" ? expect.stringMatching(/^score:\d+$/) : txs[e.at]!.signature,
          observed: e.observed,
          suppressed: false,
        })),
      );
      const notifications = await t.deps.sql<{ key: string; channel: string; destination: string; status: string; payload: NotificationPayload }[]>`
        select e.dedupe_key as key, n.channel, n.destination, n.status, n.payload from notifications n
        join alert_events e on e.id = n.event_id where e.alert_id = ${alertId}`;
      expect(notifications).toHaveLength(c.expected.length);
      notifications.sort((a, b) => position(a.key) - position(b.key));
      notifications.forEach((n, i) => {
        const at = c.expected[i]!.at;
        expect(n).toMatchObject({ channel: "webhook", destination: "http://127.0.0.1:9/hook", status: "pending" });
        expect(n.payload).toMatchObject({
          type: "risk_alert.triggered",
          data: {
            alertId,
            walletId: wallet.walletId,
            address: wallet.address,
            alias: "Treasury",
            condition: c.alert.condition,
            threshold: c.alert.threshold,
            observed: c.expected[i]!.observed,
            riskScore: expect.any(Number),
            riskFactors: expect.any(Array),
            reason: expect.any(String),
          },
        });
        const reason = c.expected[i]!.reason?.(txs);
        if (reason !== undefined) expect(n.payload.data.reason).toMatch(reason);
        if (at === "score") expect(n.payload.data.transaction).toBeUndefined();
        else expect(n.payload.data.transaction).toMatchObject({ signature: txs[at]!.signature, amount: txs[at]!.amount });
      });
    });
  }
});

describe("who is evaluated", () => {
  it("evaluates a transaction between two tracked wallets for both of them", async () => {
    const [a, b] = [await track(t, token), await track(t, token)];
    const alertA = await createAlert(t, token, { walletId: a.walletId, condition: "large_transfer", threshold: 10 });
    const alertB = await createAlert(t, token, { walletId: b.walletId, condition: "large_transfer", threshold: 10 });
    const transfer = tx({ from: a.address, to: b.address, amount: 50, blockTime: now });
    await ingestTransactions(t, token, [transfer]);
    await settled(t);
    expect((await eventsOf(t, alertA)).map((e) => e.dedupeKey)).toEqual([transfer.signature]);
    expect((await eventsOf(t, alertB)).map((e) => e.dedupeKey)).toEqual([transfer.signature]);
  });

  it("fires the alerts of every caller that tracks the address", async () => {
    const address = randomAddress();
    const bob = await t.token("bob");
    const alice = await track(t, token, address);
    const bobs = await track(t, bob, address);
    const alertAlice = await createAlert(t, token, { walletId: alice.walletId, condition: "large_transfer", threshold: 10 });
    const alertBob = await createAlert(t, bob, { walletId: bobs.walletId, condition: "large_transfer", threshold: 20 });
    const transfer = tx({ from: address, to: randomAddress(), amount: 25, blockTime: now });
    await ingestTransactions(t, token, [transfer]);
    await settled(t);
    expect(await eventsOf(t, alertAlice)).toHaveLength(1);
    expect(await eventsOf(t, alertBob)).toHaveLength(1);
  });
});
