// Exactly-once under trouble, by comparison with a clean run. One fixed, seeded sequence of
// ingest deliveries (native batches and Helius deliveries with several legs, among tracked
// wallets with alerts of all four conditions, labelled counterparties and strangers), with
// label changes and pauses at fixed points, is played twice into two fresh databases:
//
//   clean    in-process workers, each delivery evaluated before the next is sent;
//   trouble  deliveries replayed; a backlog evaluated by a worker process that is killed with
//            SIGKILL in the middle of a group (held at a row lock so that the kill lands after
//            the group's counting and before its commit); the queue keys deleted from Redis
//            (a label change's risk job among them); another worker process killed in the
//            middle of live traffic; the reconciler and the next jobs left to recover.
//
// The alert events (alert, dedupe key, condition, observed, suppressed, notifications), the
// score history, the stored scores, the alerts' baselines and the activity counters in Redis
// must come out the same. A re-run after a crash finds the lost group's batches counted
// already; it answers with what their counting answered (kept beside the markers), not with
// the counters, which hold the group's later batches by then: read from those, a wallet the
// group met in two of its batches was judged at the earlier one by the later one's
// transactions, and a burst's crossing of unusual_activity's limit could be jumped.
import { afterAll, describe, expect, it } from "vitest";
import { unpack } from "msgpackr";
import type { Transaction } from "../../src/domain/types.ts";
import type { HeliusTransaction } from "../../src/ingest/helius.ts";
import { createRandom } from "../../src/sim/random.ts";
import { ALL_QUEUES } from "../../src/queue/names.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { MINTS } from "../helpers/chain.ts";
import { holdTransaction } from "../helpers/held-transaction.ts";
import { createAlert, exited, putLabels, settled, spawnWorker, startWorkers, track, waitFor } from "../helpers/pipeline.ts";
import { bearer } from "../helpers/seed.ts";
import { COUNTERPARTY_LABELS } from "../helpers/counterparty-labels.ts";

const HELIUS_SECRET = "chaos-differential-helius-header-0123";
const LAMPORTS = 1_000_000_000;

// ---------------------------------------------------------------------------------------------
// The scenario: parties, alerts, and 36 deliveries in three phases.

// Seeded: the same sequence in both runs and in every run of the test.
const random = createRandom(20_240_601);
const pick = (n: number) => Math.floor(random.next() * n);
const { address, signature } = random;

const WALLETS = 30;
const wallets = Array.from({ length: WALLETS }, address);
/** A tracked wallet whose large transfers appear only where a worker is to be killed. */
const tripwire = address();
const LABELS = COUNTERPARTY_LABELS;
const labelled = LABELS.map(address);
const strangers = Array.from({ length: 40 }, address);
/** Names for what the comparison prints. */
const NAMES = new Map<string, string>([
  ...wallets.map((a, i): [string, string] => [a, `w${i}`]),
  ...labelled.map((a, i): [string, string] => [a, `L${i}`]),
  ...strangers.map((a, i): [string, string] => [a, `s${i}`]),
  [tripwire, "trip"],
]);
const nameOf = (a: string) => NAMES.get(a) ?? a;

const ALERTS = (i: number) =>
  [
    // A week's cooldown on every third wallet: the first event notified, the rest suppressed.
    { condition: "large_transfer", threshold: 100, cooldownSeconds: i % 3 === 0 ? 604_800 : 0 },
    { condition: "suspicious_counterparty", threshold: 75, cooldownSeconds: 0 },
    { condition: "unusual_activity", threshold: i % 2 === 0 ? 4 : 6, cooldownSeconds: 0 },
    { condition: "risk_score_increase", threshold: 10, cooldownSeconds: 0 },
  ] as const;
/** A second caller tracking some of the same wallets: each caller's alerts fire. */
const BOB_WALLETS = [0, 1, 2, 3, 4];
const BOB_ALERTS = [
  { condition: "large_transfer", threshold: 50, cooldownSeconds: 0 },
  { condition: "risk_score_increase", threshold: 5, cooldownSeconds: 0 },
] as const;

type Step = { kind: "native"; body: Transaction[] } | { kind: "helius"; body: HeliusTransaction[] };

const STEPS = 36;
const PHASE_2 = 14;
const PHASE_3 = 28;
/** Deliveries in the trouble run at which a worker is killed (each has the tripwire's large transfer). */
const KILL_1 = 9;
const KILL_2 = 20;

type Party = string;
function party(): Party {
  const roll = random.next();
  if (roll < 0.55) return wallets[pick(WALLETS)]!;
  if (roll < 0.67) return labelled[pick(labelled.length)]!;
  return strangers[pick(strangers.length)]!;
}
const TYPES = ["transfer", "transfer", "transfer", "swap", "stake", "nft", "other"] as const;

let clock = 1_717_000_000;
let slot = 268_000_000;
const advance = () => {
  // Mostly seconds apart; now and then a quiet spell of half an hour to three hours.
  clock += random.next() < 0.08 ? 1800 + pick(3 * 3600) : 5 + pick(60);
  slot += 2 + pick(100);
};

function nativeStep(): Transaction[] {
  const burst = random.next() < 0.3;
  const burster = wallets[pick(WALLETS)]!;
  const size = burst ? 8 + pick(8) : 4 + pick(8);
  return Array.from({ length: size }, () => {
    let from = burst && random.next() < 0.8 ? burster : party();
    let to = party();
    while (to === from) to = party();
    // Only transactions a chain source would bring: a tracked wallet on one side.
    if (!wallets.includes(from) && !wallets.includes(to)) from = wallets[pick(WALLETS)]!;
    advance();
    const large = random.next() < 0.08;
    const usdc = random.next() < 0.15;
    return {
      signature: signature(),
      type: TYPES[pick(TYPES.length)]!,
      amount: large ? 100 + pick(900) : Math.round(random.next() * 500) / 10,
      token: usdc ? "USDC" : "SOL",
      ...(usdc ? { mint: MINTS.USDC } : {}),
      from,
      to,
      blockTime: clock,
      slot,
      fee: 0.000005,
      status: random.next() < 0.08 ? "failed" : "success",
    } satisfies Transaction;
  });
}

/** A Helius delivery: transfers paying several accounts in SOL and USDC, a failed one, one without transfers. */
function heliusStep(): HeliusTransaction[] {
  return Array.from({ length: 2 + pick(3) }, (_, k) => {
    advance();
    const payer = random.next() < 0.7 ? wallets[pick(WALLETS)]! : party();
    const receivers = Array.from({ length: 2 + pick(3) }, party).filter((to) => to !== payer);
    const base = { signature: signature(), slot, timestamp: clock, fee: 5000, feePayer: payer };
    if (k === 2 && random.next() < 0.5) return { ...base, type: "UNKNOWN", transactionError: null, nativeTransfers: [], tokenTransfers: [] };
    return {
      ...base,
      type: "TRANSFER",
      transactionError: random.next() < 0.1 ? { InstructionError: [0, "Custom"] } : null,
      nativeTransfers: receivers.map((to) => ({
        fromUserAccount: payer,
        toUserAccount: to,
        amount: Math.round((random.next() < 0.1 ? 100 + pick(500) : random.next() * 20) * LAMPORTS),
      })),
      tokenTransfers:
        random.next() < 0.4
          ? [{ fromUserAccount: payer, toUserAccount: receivers[0] ?? party(), fromTokenAccount: address(), toTokenAccount: address(), mint: MINTS.USDC, tokenAmount: 5 + pick(400) }]
          : [],
    };
  });
}

const steps: Step[] = [];
for (let s = 0; s < STEPS; s++) {
  // Three months of silence before the last phase: every wallet wakes up from dormancy.
  if (s === PHASE_3) clock += 95 * 24 * 3600;
  if (s % 5 === 2) {
    const body = heliusStep();
    // Helius delivers an item of an earlier delivery again, beside new ones: a duplicate.
    if (s === 17) body.unshift(steps[12]!.body[0] as HeliusTransaction);
    steps.push({ kind: "helius", body });
    continue;
  }
  const body = nativeStep();
  if (s === KILL_1 || s === KILL_2) {
    advance();
    body.push({ signature: signature(), type: "transfer", amount: 50_000, token: "SOL", from: tripwire, to: strangers[0]!, blockTime: clock, slot, fee: 0.000005, status: "success" });
  }
  // A poller sends two transactions of the delivery before again, with new ones.
  if (s === 11) body.unshift(...(steps[10]!.body as Transaction[]).slice(0, 2));
  steps.push({ kind: "native", body });
}

/** Each signature's delivery (the first that carried it). */
const stepOfSignature = new Map<string, number>();
steps.forEach((step, s) => {
  for (const item of step.body) if (!stepOfSignature.has(item.signature)) stepOfSignature.set(item.signature, s);
});
const STRANGER_TO_LABEL = strangers[1]!;

// ---------------------------------------------------------------------------------------------
// Playing it.

type Run = {
  t: TestApp;
  alice: string;
  bob: string;
  /** Alert id → "owner/wallet/condition". */
  alertNames: Map<string, string>;
  alertIds: Map<string, string>;
  /** risk_score_history ids at or below these were written before each label change. */
  labelChangeAfter: number[];
};

async function post(run: Run, s: number): Promise<{ accepted: number; duplicates: number }> {
  const step = steps[s]!;
  const res =
    step.kind === "native"
      ? await run.t.app.inject({ method: "POST", url: "/v1/ingest/transactions", headers: bearer(run.alice), payload: { transactions: step.body } })
      : await run.t.app.inject({ method: "POST", url: "/v1/ingest/helius", headers: { authorization: HELIUS_SECRET }, payload: step.body });
  expect(res.statusCode, res.body).toBe(202);
  return res.json();
}

/** A delivery sent again: all of it is a duplicate. */
async function replay(run: Run, s: number): Promise<void> {
  const answer = await post(run, s);
  expect(answer).toMatchObject({ accepted: 0, duplicates: steps[s]!.body.length });
}

async function setUp(label: string): Promise<Run> {
  const t = await startTestApp(label, { HELIUS_AUTH_HEADER: HELIUS_SECRET });
  const [alice, bob] = [await t.token("alice"), await t.token("bob")];
  const run: Run = { t, alice, bob, alertNames: new Map(), alertIds: new Map(), labelChangeAfter: [] };
  expect((await putLabels(t, alice, LABELS.map((l, i) => ({ address: labelled[i]!, ...l })))).statusCode).toBe(200);
  const add = async (token: string, owner: string, walletId: string, w: string, alert: { condition: string; threshold: number; cooldownSeconds: number }) => {
    const id = await createAlert(t, token, { walletId, ...alert });
    run.alertNames.set(id, `${owner}/${nameOf(w)}/${alert.condition}`);
    run.alertIds.set(`${owner}/${nameOf(w)}/${alert.condition}`, id);
  };
  for (const [i, w] of wallets.entries()) {
    const { walletId } = await track(t, alice, w);
    for (const alert of ALERTS(i)) await add(alice, "alice", walletId, w, alert);
  }
  const trip = await track(t, alice, tripwire);
  await add(alice, "alice", trip.walletId, tripwire, { condition: "large_transfer", threshold: 10_000, cooldownSeconds: 0 });
  for (const i of BOB_WALLETS) {
    const { walletId } = await track(t, bob, wallets[i]!);
    for (const alert of BOB_ALERTS) await add(bob, "bob", walletId, wallets[i]!, alert);
  }
  return run;
}

async function setStatus(run: Run, name: string, status: "active" | "paused"): Promise<void> {
  const res = await run.t.app.inject({
    method: "PATCH",
    url: `/v1/risk/alerts/${run.alertIds.get(name)}`,
    headers: bearer(name.startsWith("bob/") ? run.bob : run.alice),
    payload: { status },
  });
  expect(res.statusCode, res.body).toBe(200);
}

const PAUSED_IN_PHASE_2 = ["alice/w3/large_transfer", "alice/w5/unusual_activity"];
const PAUSED_IN_PHASE_3 = ["alice/w7/risk_score_increase", "alice/w8/suspicious_counterparty", "bob/w1/large_transfer"];

/** Between phase 1 and 2: a stranger found to be a hack's address; two alerts paused. */
async function betweenPhases1And2(run: Run): Promise<void> {
  for (const name of PAUSED_IN_PHASE_2) await setStatus(run, name, "paused");
  run.labelChangeAfter.push(await maxHistoryId(run.t));
  expect((await putLabels(run.t, run.alice, [{ address: STRANGER_TO_LABEL, category: "hack", score: 85 }])).statusCode).toBe(200);
}

/** Between phase 2 and 3: the mixer downgraded, the exchange upgraded; alerts paused and resumed. */
async function betweenPhases2And3(run: Run): Promise<void> {
  await setStatus(run, PAUSED_IN_PHASE_2[0]!, "active");
  for (const name of PAUSED_IN_PHASE_3) await setStatus(run, name, "paused");
  run.labelChangeAfter.push(await maxHistoryId(run.t));
  const res = await putLabels(run.t, run.alice, [
    { address: labelled[1]!, category: "defi", score: 10 },
    { address: labelled[4]!, category: "flagged", score: 80 },
  ]);
  expect(res.statusCode).toBe(200);
}

const maxHistoryId = async (t: TestApp) =>
  (await t.deps.sql<{ id: number }[]>`select coalesce(max(id), 0)::int as id from risk_score_history`)[0]!.id;

async function cleanRun(): Promise<Snapshot> {
  const run = await setUp("chaos-differential-clean");
  runs.push(run);
  const workers = startWorkers(run.t);
  try {
    for (let s = 0; s < STEPS; s++) {
      if (s === PHASE_2) await betweenPhases1And2(run);
      if (s === PHASE_3) await betweenPhases2And3(run);
      await settled(run.t);
      await post(run, s);
      await settled(run.t);
    }
  } finally {
    await workers.close();
  }
  return snapshot(run);
}

const WORKER_ENV = { WORKER_QUEUES: "transactions,risk,maintenance", EVALUATION_GROUP_TRANSACTIONS: "40", LOG_LEVEL: "info" };
type Worker = ReturnType<typeof spawnWorker>;

async function startWorker(run: Run, workers: Worker[]): Promise<Worker> {
  const worker = spawnWorker(run.t, WORKER_ENV);
  workers.push(worker);
  await waitFor("a worker process to start", async () => worker.output().includes('"msg":"worker started"'), 20_000);
  return worker;
}

/** The tripwire's alert row held locked: the evaluation that fires it waits there, counted and uncommitted. */
async function holdTripwire(run: Run): Promise<() => Promise<void>> {
  const alertId = run.alertIds.get("alice/trip/large_transfer")!;
  return holdTransaction(run.t.deps.sql, (tx) => tx`select 1 from alerts where id = ${alertId} for update`);
}

/** Kills the worker once its evaluation waits for the held row, then lets the row go; returns the batches lost uncommitted. */
async function killWhileEvaluating(run: Run, worker: Worker, release: () => Promise<void>): Promise<number[]> {
  const { sql } = run.t.deps;
  const [blocked] = await waitFor("the worker's evaluation to wait for the held alert row", async () => {
    const rows = await sql<{ pid: number }[]>`
      select pid from pg_stat_activity where datname = current_database() and cardinality(pg_blocking_pids(pid)) > 0`;
    return rows.length > 0 ? rows : null;
  });
  worker.kill("SIGKILL");
  expect((await exited(worker)).signal).toBe("SIGKILL");
  await release();
  // Its backend ends once it sees the connection gone, without a commit.
  await waitFor("the killed worker's backend to end", async () => {
    const rows = await sql`select 1 from pg_stat_activity where pid = ${blocked!.pid}`;
    return rows.length === 0;
  });
  const open = await sql<{ id: string }[]>`select id from ingest_batches where evaluated_at is null`;
  const markers = await Promise.all(open.map(({ id }) => run.t.deps.redis.exists(`${run.t.config.queuePrefix}:activity-batch:${id}`)));
  const counted = open.filter((_, i) => markers[i] === 1).map(({ id }) => id);
  const steps = await stepsOfBatches(run.t);
  return counted.map((id) => steps.get(id)!).sort((a, b) => a - b);
}

/** Redis loses the queues (every job, the reconciler's schedule), not the activity counters. */
async function deleteQueueKeys(run: Run): Promise<number> {
  const { redis, config } = run.t.deps;
  let deleted = 0;
  for (const queue of ALL_QUEUES) {
    let cursor = "0";
    do {
      const [next, keys] = await redis.scan(cursor, "MATCH", `${config.queuePrefix}:${queue}:*`, "COUNT", 1000);
      cursor = next;
      if (keys.length > 0) deleted += await redis.del(...keys);
    } while (cursor !== "0");
  }
  return deleted;
}

/** The reconciler leaves work younger than 5 s to its first enqueue: a worker started later re-enqueues it at once. */
async function pastReconcileGrace(since: number): Promise<void> {
  const wait = since + 5_500 - Date.now();
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
}

async function troubleRun(): Promise<{ snapshot: Snapshot; lost: number[][] }> {
  const run = await setUp("chaos-differential-trouble");
  runs.push(run);
  const workers: Worker[] = [];
  const lost: number[][] = [];
  try {
    // Phase 1: a backlog, with deliveries sent twice, then a worker killed mid-group.
    for (let s = 0; s < PHASE_2; s++) {
      await post(run, s);
      if (s === 5) await replay(run, 2);
      if (s === 8) await replay(run, 7);
    }
    const lastIngest = Date.now();
    let release = await holdTripwire(run);
    const first = await startWorker(run, workers);
    lost.push(await killWhileEvaluating(run, first, release));
    expect(lost[0]).toContain(KILL_1);
    expect(await deleteQueueKeys(run)).toBeGreaterThan(0);
    await replay(run, 12);
    await pastReconcileGrace(lastIngest);
    const second = await startWorker(run, workers);
    await settled(run.t, 30_000);
    second.kill("SIGTERM");
    expect((await exited(second)).code, second.output()).toBe(0);

    // The label change's risk job is lost with the queues: a batch of its address, or the
    // reconciler, evaluates the change.
    await betweenPhases1And2(run);
    const labelChanged = Date.now();
    await deleteQueueKeys(run);

    // Phase 2: live traffic, a worker killed while it evaluates, the queues lost again.
    let live = await startWorker(run, workers);
    for (let s = PHASE_2; s < PHASE_3; s++) {
      if (s === KILL_2) release = await holdTripwire(run);
      await post(run, s);
      if (s === 16) await replay(run, 15);
      if (s === KILL_2 + 2) {
        lost.push(await killWhileEvaluating(run, live, release));
        expect(lost[1]).toContain(KILL_2);
        await deleteQueueKeys(run);
        await replay(run, KILL_2 - 1);
        await pastReconcileGrace(labelChanged);
        live = await startWorker(run, workers);
      }
    }
    await settled(run.t, 30_000);

    // Phase 3: the queues lost in the middle of live traffic.
    await betweenPhases2And3(run);
    await settled(run.t);
    for (let s = PHASE_3; s < STEPS; s++) {
      await post(run, s);
      if (s === 31) await deleteQueueKeys(run);
      if (s === 33) await replay(run, 30);
    }
    await settled(run.t, 30_000);
    return { snapshot: await snapshot(run), lost };
  } finally {
    for (const worker of workers) if (worker.exitCode === null && worker.signalCode === null) worker.kill("SIGTERM");
    for (const worker of workers) await exited(worker);
  }
}

// ---------------------------------------------------------------------------------------------
// What a run left, named so that two runs compare.

type EventRow = { alert: string; key: string; condition: string; observed: number; suppressed: boolean; notifications: number };
type HistoryRow = { address: string; cause: string; previous: number; score: number; factors: string[] };
type Snapshot = {
  events: EventRow[];
  history: HistoryRow[];
  scores: Array<{ address: string; score: number; factors: string[] }>;
  baselines: Array<{ alert: string; baseline: number | null; status: string }>;
  counters: Array<{ address: string; state: unknown; hours: Record<string, string>; counterparties: string[] }>;
};

/** Batch id → the delivery whose transactions it stored. */
async function stepsOfBatches(t: TestApp): Promise<Map<string, number>> {
  const rows = await t.deps.sql<{ batchId: string; signature: string }[]>`
    select distinct on (batch_id) batch_id as "batchId", signature from transactions order by batch_id, leg`;
  return new Map(rows.map((row) => [row.batchId, stepOfSignature.get(row.signature)!]));
}

async function snapshot(run: Run): Promise<Snapshot> {
  const { sql, redis, config } = run.t.deps;
  const batchStep = await stepsOfBatches(run.t);
  const causeName = (id: number, cause: string) => {
    if (cause.startsWith("batch:")) return `b${batchStep.get(cause.slice("batch:".length))}`;
    // A label load's id (labels:lld_…) differs between the runs: the changes are told apart by when they came.
    if (cause === "labels" || cause.startsWith("labels:")) return `labels#${run.labelChangeAfter.filter((after) => id > after).length}`;
    return cause;
  };
  const historyRows = await sql<{ id: number; address: string; cause: string; previous: number; score: number; factors: string[] }[]>`
    select id::int, address, cause, previous_score as previous, score, factors from risk_score_history order by id`;
  const history = historyRows.map((h) => ({ address: nameOf(h.address), cause: causeName(h.id, h.cause), previous: h.previous, score: h.score, factors: [...h.factors].sort() }));
  const byId = new Map(historyRows.map((h, i) => [h.id, history[i]!]));
  const eventRows = await sql<{ alertId: string; dedupeKey: string; condition: string; observed: number; suppressed: boolean; notifications: number }[]>`
    select e.alert_id as "alertId", e.dedupe_key as "dedupeKey", e.condition, e.observed::float8 as observed, e.suppressed,
           (select count(*)::int from notifications n where n.event_id = e.id) as notifications
    from alert_events e`;
  const events = eventRows.map((e) => {
    let key: string;
    if (e.dedupeKey.startsWith("score:")) {
      const change = byId.get(Number(e.dedupeKey.slice("score:".length)))!;
      key = `score ${change.address} ${change.cause} ${change.previous}->${change.score}`;
    } else key = `tx b${stepOfSignature.get(e.dedupeKey)} ${e.dedupeKey.slice(0, 8)}`;
    return { alert: run.alertNames.get(e.alertId)!, key, condition: e.condition, observed: e.observed, suppressed: e.suppressed, notifications: e.notifications };
  });
  const scores = (
    await sql<{ address: string; score: number; factors: string[] }[]>`
      select address, risk_score as score, risk_factors as factors from address_state`
  ).map((s) => ({ address: nameOf(s.address), score: s.score, factors: [...s.factors].sort() }));
  const baselines = (
    await sql<{ id: string; baseline: number | null; status: string }[]>`select id, baseline_score as baseline, status from alerts`
  ).map((a) => ({ alert: run.alertNames.get(a.id)!, baseline: a.baseline, status: a.status }));
  const counters = [];
  for (const a of [...wallets, tripwire]) {
    const raw = await redis.getBuffer(`${config.queuePrefix}:activity:${a}`);
    let state: unknown = null;
    if (raw) {
      const fields = unpack(raw) as number[];
      // The expiry flags (index 14) say which keys had their TTL set; the newest send's block
      // time (index 15) is compared; the minutes are in no particular order.
      const minutes: number[][] = [];
      for (let k = 16; k < fields.length; k += 3) minutes.push(fields.slice(k, k + 3));
      state = { meta: [...fields.slice(0, 14), fields[15]], minutes: minutes.sort((x, y) => x[0]! - y[0]!) };
    }
    const hours = await redis.hgetall(`${config.queuePrefix}:activity-h:${a}`);
    const counterparties = (await redis.smembers(`${config.queuePrefix}:activity-cp:${a}`)).sort();
    counters.push({ address: nameOf(a), state, hours, counterparties });
  }
  const order = <T>(rows: T[]) => rows.sort((x, y) => (JSON.stringify(x) < JSON.stringify(y) ? -1 : 1));
  return { events: order(events), history, scores: order(scores), baselines: order(baselines), counters };
}

/** Rows of one side that the other lacks (as multisets), each marked with its side. */
function differences<T>(clean: readonly T[], trouble: readonly T[]): Array<T & { in: "clean" | "trouble" }> {
  const count = new Map<string, number>();
  for (const row of clean) count.set(JSON.stringify(row), (count.get(JSON.stringify(row)) ?? 0) + 1);
  const onlyTrouble: Array<T & { in: "trouble" }> = [];
  for (const row of trouble) {
    const key = JSON.stringify(row);
    const left = count.get(key) ?? 0;
    if (left > 0) count.set(key, left - 1);
    else onlyTrouble.push({ ...row, in: "trouble" });
  }
  const onlyClean = [...count].flatMap(([key, n]) => Array.from({ length: n }, () => ({ ...(JSON.parse(key) as T), in: "clean" as const })));
  return [...onlyClean, ...onlyTrouble];
}

/** Where an event's key or a change's cause falls in the sequence: a delivery's index, a label change between two. */
function positionOf(keyOrCause: string): number {
  const batch = /\bb(\d+)\b/.exec(keyOrCause);
  if (batch) return Number(batch[1]);
  if (keyOrCause.includes("labels#1")) return PHASE_2 - 0.5;
  if (keyOrCause.includes("labels#2")) return PHASE_3 - 0.5;
  return -1;
}

// ---------------------------------------------------------------------------------------------

const runs: Run[] = [];
afterAll(async () => {
  for (const run of runs) await run.t.close();
});

describe("the alert pipeline under replays, worker crashes and lost queues", () => {
  it("records the same events, scores and counts as a clean run of the same deliveries", async () => {
    const clean = await cleanRun();
    const { snapshot: trouble, lost } = await troubleRun();
    // Counted exactly once, and scored alike in the end.
    expect(trouble.counters).toEqual(clean.counters);
    expect(trouble.scores).toEqual(clean.scores);

    // The trouble happened: a lost group of several batches, and the clean run fired every condition.
    expect(lost[0]!.length).toBeGreaterThan(1);
    expect(new Set(clean.events.map((e) => e.condition))).toEqual(
      new Set(["large_transfer", "suspicious_counterparty", "unusual_activity", "risk_score_increase"]),
    );

    // Listed as the rows only one side has, so that a failure shows what differs.
    expect(differences(clean.events, trouble.events)).toEqual([]);
    expect(differences(clean.history, trouble.history)).toEqual([]);
    expect(differences(clean.baselines, trouble.baselines)).toEqual([]);
    // No firing of a paused alert: nothing on a delivery sent while it was paused.
    for (const [names, from, to] of [[PAUSED_IN_PHASE_2, PHASE_2 - 0.5, PHASE_3 - 0.5], [PAUSED_IN_PHASE_3, PHASE_3 - 0.5, STEPS]] as const) {
      const fired = trouble.events.filter((e) => names.includes(e.alert) && positionOf(e.key) > from && positionOf(e.key) < to);
      expect(fired).toEqual([]);
    }
  }, 120_000);
});
