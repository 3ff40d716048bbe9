// An evaluation group (the open batches one job evaluates together) is a matter of load, not of
// meaning: what fires must be what the same batches fire when evaluated one at a time. Each
// scenario here is stored once per mode, on wallets of its own, and evaluated either batch by
// batch (EVALUATION_GROUP_TRANSACTIONS 1) or as one group; both must fire the expected events.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { Transaction } from "../../src/domain/types.ts";
import { storeTransactionBatch } from "../../src/ingest/store.ts";
import { evaluateBatch } from "../../src/pipeline/evaluate-batch.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { randomAddress, randomSignature } from "../helpers/chain.ts";
import { createAlert, eventsOf, exited, putLabels, spawnWorker, startWorkers, track, tx, waitFor } from "../helpers/pipeline.ts";

let t: TestApp;
let token: string;
let clock = Math.floor(Date.now() / 1000);

beforeAll(async () => {
  t = await startTestApp("group-semantics");
  token = await t.token("alice");
});
afterAll(async () => {
  await t.close();
});
// Each test starts with no open batch, so that a group holds only what the test stored.
beforeEach(async () => {
  await t.deps.sql`update ingest_batches set evaluated_at = now() where evaluated_at is null`;
});

const MODES = [
  { name: "one batch at a time", groupTransactions: 1 },
  { name: "all batches in one group", groupTransactions: 10_000 },
] as const;

/** Stores the batches (no job runs), then evaluates them in the mode's groups, oldest first. */
async function storeAndEvaluate(batches: Array<Array<Partial<Transaction>>>, groupTransactions: number): Promise<void> {
  const ids: string[] = [];
  for (const batch of batches) {
    const { batchId } = await storeTransactionBatch(t.deps, batch.map((overrides) => tx({ amount: 1, blockTime: clock++, ...overrides })));
    ids.push(batchId!);
  }
  const deps = { ...t.deps, config: { ...t.deps.config, evaluationGroupTransactions: groupTransactions } };
  for (const batchId of ids) await evaluateBatch(deps, batchId);
}

async function labelled(category: string, score: number): Promise<string> {
  const address = randomAddress();
  expect((await putLabels(t, token, [{ address, category, score }])).statusCode).toBe(200);
  return address;
}

/** The address's score changes recorded by batch evaluations, oldest first. */
function batchScoreChanges(address: string) {
  return t.deps.sql<{ previous: number; score: number }[]>`
    select previous_score as previous, score from risk_score_history
    where address = ${address} and cause like 'batch:%' order by id`;
}

describe.each(MODES)("evaluated $name", ({ groupTransactions }) => {
  it("fires risk_score_increase once for each batch whose rise reaches the threshold", async () => {
    const [mixer, sanctioned] = [await labelled("mixer", 90), await labelled("sanctioned", 100)];
    const wallet = await track(t, token);
    const alertId = await createAlert(t, token, { walletId: wallet.walletId, condition: "risk_score_increase", threshold: 10 });

    await storeAndEvaluate([[{ from: wallet.address, to: mixer }], [{ from: wallet.address, to: sanctioned }]], groupTransactions);

    // 0 → 60 (mixer), then 60 → 96 (sanctioned as well): two rises of at least 10.
    expect((await eventsOf(t, alertId)).map((e) => e.observed)).toEqual([60, 36]);
    // Each notification shows the score its change reached, not where the group ended.
    const notified = await t.deps.sql<{ riskScore: number }[]>`
      select (payload->'data'->>'riskScore')::int as "riskScore" from notifications where alert_id = ${alertId} order by id`;
    expect(notified.map((n) => n.riskScore)).toEqual([60, 96]);
    expect(await batchScoreChanges(wallet.address)).toEqual([
      { previous: 0, score: 60 },
      { previous: 60, score: 96 },
    ]);
  });

  it("fires risk_score_increase for a rise that a later batch takes back", async () => {
    const wallet = await track(t, token);
    const alertId = await createAlert(t, token, { walletId: wallet.walletId, condition: "risk_score_increase", threshold: 10 });
    // Ten new counterparties within the hour: new_counterparty_burst, 0 → 15. Two hours later
    // the burst is over and the score is back to 0.
    const burst = Array.from({ length: 10 }, () => ({ from: wallet.address, to: randomAddress() }));
    const later = clock + 2 * 3600;

    await storeAndEvaluate([burst, [{ from: wallet.address, to: randomAddress(), blockTime: later }]], groupTransactions);
    clock = later + 1;

    expect((await eventsOf(t, alertId)).map((e) => e.observed)).toEqual([15]);
    expect(await batchScoreChanges(wallet.address)).toEqual([
      { previous: 0, score: 15 },
      { previous: 15, score: 0 },
    ]);
  });

  it("fires suspicious_counterparty on a tracked counterparty's score from the batches before", async () => {
    const sanctioned = await labelled("sanctioned", 100);
    const counterparty = await track(t, token);
    const wallet = await track(t, token);
    const alertId = await createAlert(t, token, { walletId: wallet.walletId, condition: "suspicious_counterparty", threshold: 75 });

    // The counterparty deals with a sanctioned address (its score 0 → 90), then the wallet pays it.
    await storeAndEvaluate(
      [[{ from: counterparty.address, to: sanctioned }], [{ from: wallet.address, to: counterparty.address }]],
      groupTransactions,
    );

    expect((await eventsOf(t, alertId)).map((e) => e.observed)).toEqual([90]);
  });

  it("shows in a transaction's notification the wallet's score after that transaction's batch", async () => {
    const [mixer, sanctioned] = [await labelled("mixer", 90), await labelled("sanctioned", 100)];
    const wallet = await track(t, token);
    const alertId = await createAlert(t, token, { walletId: wallet.walletId, condition: "large_transfer", threshold: 100 });

    await storeAndEvaluate(
      // USDC: no SOL outflow to raise the score on its own.
      [[{ from: wallet.address, to: mixer, amount: 500, token: "USDC" }], [{ from: wallet.address, to: sanctioned, amount: 700, token: "USDC" }]],
      groupTransactions,
    );

    const notified = await t.deps.sql<{ observed: number; riskScore: number }[]>`
      select (payload->'data'->>'observed')::float8 as observed, (payload->'data'->>'riskScore')::int as "riskScore"
      from notifications where alert_id = ${alertId} order by id`;
    expect(notified).toEqual([
      { observed: 500, riskScore: 60 },
      { observed: 700, riskScore: 96 },
    ]);
  });

  it("judges a transaction hours late only on the minutes that evaluating one batch at a time still keeps", async () => {
    const wallet = await track(t, token);
    const alertId = await createAlert(t, token, { walletId: wallet.walletId, condition: "unusual_activity", threshold: 2 });
    // The newest transaction, then two three hours older than it, a minute apart, in batches of
    // their own. Minute buckets are kept two hours back from the newest, so the first late one's
    // minute is gone once its batch is counted: the second one's trailing hour holds itself only,
    // below the limit of 2.
    const newest = clock + 4 * 3600;
    const late = newest - 3 * 3600;
    const payment = (blockTime: number) => [{ from: wallet.address, to: randomAddress(), blockTime }];

    await storeAndEvaluate([payment(newest), payment(late), payment(late + 60)], groupTransactions);
    clock = newest + 1;

    expect(await eventsOf(t, alertId)).toEqual([]);
  });

  it("fires unusual_activity once for a burst whose transactions arrive out of order", async () => {
    // Threshold 5 on a quiet wallet: the limit is 5 in the trailing hour. Deliveries: 12:00–12:02,
    // 12:04, 12:03 (late), 12:05–12:07. At its own minute the late one counts 4 (12:04 is after
    // it), and 12:05–12:07 find 5, 6, 7 before them: judged only per transaction, the hour reached
    // 8 and nothing fired. At the newest minute, the late one's batch takes the hour from 4 to 5.
    const wallet = await track(t, token);
    const alertId = await createAlert(t, token, { walletId: wallet.walletId, condition: "unusual_activity", threshold: 5 });
    const noon = clock - (clock % 60) + 3600;
    const signatures = Array.from({ length: 8 }, randomSignature);
    const at = (minute: number) => ({ from: wallet.address, to: randomAddress(), blockTime: noon + minute * 60, signature: signatures[minute]! });

    await storeAndEvaluate([[at(0), at(1), at(2)], [at(4)], [at(3)], [at(5), at(6), at(7)]], groupTransactions);
    clock = noon + 8 * 60;

    expect((await eventsOf(t, alertId)).map((e) => ({ key: e.dedupeKey, observed: e.observed }))).toEqual([{ key: signatures[3], observed: 5 }]);
  });
});

/** A small seeded generator: the same scenario in every mode and every run. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let x = Math.imul(state ^ (state >>> 15), 1 | state);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** A party of a scenario transaction: one of its tracked wallets, a labelled address, or a stranger. */
type Party = { wallet: number } | { labelled: number } | { stranger: number };
type ScenarioTx = { from: Party; to: Party; amount: number; failed: boolean; secondsAfter: number };

const WALLETS = 5;
const LABELS = [
  { category: "mixer", score: 90 },
  { category: "sanctioned", score: 100 },
  { category: "scam", score: 70 },
  { category: "flagged", score: 60 },
  { category: "exchange", score: 20 },
];

/** Batches of transactions among a few wallets, labelled addresses and strangers, with bursts and quiet hours. */
function scenario(seed: number): ScenarioTx[][] {
  const random = seeded(seed);
  const pick = (n: number) => Math.floor(random() * n);
  const party = (): Party => {
    const roll = random();
    if (roll < 0.55) return { wallet: pick(WALLETS) };
    if (roll < 0.7) return { labelled: pick(LABELS.length) };
    return { stranger: pick(40) };
  };
  return Array.from({ length: 10 }, () => {
    const burst = random() < 0.3;
    const size = burst ? 12 + pick(14) : 2 + pick(6);
    const burster: Party = { wallet: pick(WALLETS) };
    return Array.from({ length: size }, (_, i) => {
      const from = burst && random() < 0.8 ? burster : party();
      let to = party();
      while (JSON.stringify(to) === JSON.stringify(from)) to = party();
      // Mostly seconds apart; now and then a quiet spell of minutes or hours.
      const gap = random() < 0.1 ? 600 + pick(3 * 3600) : i === 0 && random() < 0.3 ? 3600 + pick(7200) : 1 + pick(40);
      return { from, to, amount: Math.round(random() * 1200) / 10, failed: random() < 0.1, secondsAfter: gap };
    });
  });
}

type Fired = { wallet: number; condition: string; at: string; observed: number; notifiedScore: number | null };

/**
 * Plays a scenario on wallets of its own, evaluated in groups of up to `grouping`
 * transactions or by two live workers, and lists what fired per wallet: each event named by
 * the scenario transaction it fired on, or by the batch whose score change it fired on, with
 * the score its notification carries.
 */
async function play(batches: ScenarioTx[][], start: number, grouping: number | "two workers" | "two worker processes", caller: string): Promise<Fired[]> {
  const wallets: Array<{ address: string; alerts: Map<string, string> }> = [];
  for (let i = 0; i < WALLETS; i++) {
    const wallet = await track(t, caller);
    const alerts = new Map<string, string>();
    for (const [condition, threshold] of [
      ["large_transfer", 100],
      ["suspicious_counterparty", 75],
      ["unusual_activity", 4],
      ["risk_score_increase", 10],
    ] as const) {
      alerts.set(await createAlert(t, caller, { walletId: wallet.walletId, condition, threshold, cooldownSeconds: 0 }), condition);
    }
    wallets.push({ address: wallet.address, alerts });
  }
  const labelled = LABELS.map(() => randomAddress());
  expect((await putLabels(t, caller, LABELS.map((label, i) => ({ address: labelled[i]!, ...label })))).statusCode).toBe(200);
  const strangers = Array.from({ length: 40 }, () => randomAddress());
  const addressOf = (p: Party) => ("wallet" in p ? wallets[p.wallet]!.address : "labelled" in p ? labelled[p.labelled]! : strangers[p.stranger]!);

  // The same block times in every mode: the counters' hours and minutes fall alike.
  let blockTime = start;
  const txIndex = new Map<string, string>();
  const stored: Transaction[][] = batches.map((batch, b) =>
    batch.map((s, i) => {
      blockTime += s.secondsAfter;
      const transaction = tx({ from: addressOf(s.from), to: addressOf(s.to), amount: s.amount, status: s.failed ? "failed" : "success", blockTime });
      txIndex.set(transaction.signature, `tx ${b}.${i}`);
      return transaction;
    }),
  );
  const batchIndex = new Map<string, string>();
  const ids: string[] = [];
  // Two workers evaluate the batches as they arrive, in whatever groups their timing makes.
  const workers = grouping === "two workers" ? [startWorkers(t, ["transactions"]), startWorkers(t, ["transactions"])] : [];
  // Worker processes each keep their own alerts in memory; groups of about 20 transactions.
  const env = { WORKER_QUEUES: "transactions", EVALUATION_GROUP_TRANSACTIONS: "20", LOG_LEVEL: "info" };
  const processes = grouping === "two worker processes" ? [spawnWorker(t, env), spawnWorker(t, env)] : [];
  for (const child of processes) await waitFor("a worker process to start", async () => child.output().includes("worker started"));
  try {
    for (const [b, batch] of stored.entries()) {
      const { batchId } = await storeTransactionBatch(t.deps, batch);
      batchIndex.set(batchId!, `score after batch ${b}`);
      ids.push(batchId!);
    }
    if (typeof grouping === "string") {
      await waitFor("the workers to evaluate every batch", async () => (await t.deps.sql`
        select 1 from ingest_batches where id = any(${ids}::text[]) and evaluated_at is null`).length === 0);
    } else {
      const deps = { ...t.deps, config: { ...t.deps.config, evaluationGroupTransactions: grouping } };
      for (const batchId of ids) await evaluateBatch(deps, batchId);
    }
  } finally {
    await Promise.all(workers.map((running) => running.close()));
    for (const child of processes) child.kill("SIGTERM");
    for (const child of processes) expect((await exited(child)).code, child.output()).toBe(0);
  }

  const fired: Fired[] = [];
  for (const [w, { alerts }] of wallets.entries()) {
    for (const [alertId, condition] of alerts) {
      const events = await t.deps.sql<{ dedupeKey: string; observed: number; notifiedScore: number | null }[]>`
        select e.dedupe_key as "dedupeKey", e.observed::float8 as observed,
               (n.payload->'data'->>'riskScore')::int as "notifiedScore"
        from alert_events e left join notifications n on n.event_id = e.id
        where e.alert_id = ${alertId}`;
      for (const event of events) {
        let at = txIndex.get(event.dedupeKey);
        if (!at) {
          const [change] = await t.deps.sql<{ cause: string }[]>`select cause from risk_score_history where id = ${Number(event.dedupeKey.slice("score:".length))}`;
          // Named by the (last) batch whose evaluation recorded it.
          at = batchIndex.get(change!.cause.replace(/^batch:/, "").split(" ").at(-1)!) ?? change!.cause;
        }
        fired.push({ wallet: w, condition, at, observed: event.observed, notifiedScore: event.notifiedScore });
      }
    }
  }
  return fired.sort((a, b) => a.wallet - b.wallet || a.condition.localeCompare(b.condition) || a.at.localeCompare(b.at));
}

describe("random sequences of batches", () => {
  it.each([1, 2, 3])("fire the same events whatever the grouping, with live workers in this process and in two worker processes too (scenario %i)", async (seed) => {
    const batches = scenario(seed);
    // A caller of its own: a scenario's requests stay clear of the per-caller rate limit.
    const caller = await t.token(`scenario-${seed}`);
    const start = clock;
    clock += 7 * 24 * 3600;
    const alone = await play(batches, start, 1, caller);
    // Every condition fires somewhere, or the comparison proves little.
    expect(new Set(alone.map((f) => f.condition))).toEqual(
      new Set(["large_transfer", "suspicious_counterparty", "unusual_activity", "risk_score_increase"]),
    );
    expect(await play(batches, start, 10_000, caller)).toEqual(alone);
    expect(await play(batches, start, 25, caller)).toEqual(alone);
    expect(await play(batches, start, "two workers", caller)).toEqual(alone);
    expect(await play(batches, start, "two worker processes", caller)).toEqual(alone);
  });
});
