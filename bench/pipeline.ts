// npm run bench:pipeline — the detection pipeline under load (DESIGN.md section 9: ≥ 40,000
// transactions/s ingested, stored and evaluated, with 10,000 tracked wallets and 20,000
// alerts, on 2 cores). Not a test.
//
// A fresh scratch database (wallet_alerts_bench) and queue prefix; the population and traffic of
// bench/pipeline-data.ts generated beforehand; the transactions go through the real storing
// path (storeTransactionBatch: one unnest insert and one job per batch) from this process,
// two batches at a time, and are evaluated by real worker processes (src/bin/worker.ts,
// WORKER_QUEUES=transactions,risk). Timed from the first store to the last batch evaluated.
// In the same run: the machine's ceilings (bench/pipeline-ceilings.ts), where the CPU went (and
// its sum against what a transaction may cost at the target: the cores over 40,000/s), and
// each half alone: storing with no worker running (first on the empty table, and again at the
// end on the table the run filled: its indexes then outgrow a small shared_buffers, and each
// row costs Postgres more), and evaluating a backlog stored while the queue was paused (which
// the workers then take in groups). When the server runs with
// autovacuum off, bench/lib/stand-in-autovacuum.ts does its work (the JSON says which).
//
// Settings (environment): BENCH_TRANSACTIONS (300000), BENCH_BATCH (2500), BENCH_WORKERS (2),
// BENCH_INGESTERS (2), BENCH_CPU_PROFILE (a directory: the workers write V8 CPU profiles there).
// Output: one JSON document, then a short table.
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import os from "node:os";
import { fileURLToPath } from "node:url";
import postgres from "postgres";
import { loadConfig } from "../src/config.ts";
import { createDeps } from "../src/deps.ts";
import type { Transaction } from "../src/domain/types.ts";
import { storeTransactionBatch } from "../src/ingest/store.ts";
import { createLogger } from "../src/logger.ts";
import { deletePrefixKeys } from "../test/helpers/redis-keys.ts";
import { writeReport, type Row } from "./lib/report.ts";
import { freshScratchDatabase } from "./lib/scratch-db.ts";
import { standInForAutovacuum } from "./lib/stand-in-autovacuum.ts";
import { measureCeilings } from "./pipeline-ceilings.ts";
import { cpuBetween, rssMb, sampleCpu } from "./pipeline-cpu.ts";
import { ALERTS, WALLETS, generateTraffic, seedPopulation } from "./pipeline-data.ts";

const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const DB_NAME = "wallet_alerts_bench";
const TRANSACTIONS = Number(process.env.BENCH_TRANSACTIONS ?? 300_000);
const BATCH = Number(process.env.BENCH_BATCH ?? 2_500);
const WORKERS = Number(process.env.BENCH_WORKERS ?? 2);
const INGESTERS = Number(process.env.BENCH_INGESTERS ?? 2);
const PROFILE_DIR = process.env.BENCH_CPU_PROFILE;
/** Transactions stored with no worker running: the ingest path's own cost, for comparison. */
const STORE_ONLY = Math.min(50_000, TRANSACTIONS);
/** Transactions stored while the workers are paused, then evaluated: evaluation's own rate. */
const BACKLOG = Math.min(100_000, TRANSACTIONS);
const TARGET_TPS = 40_000;
const ROOT = fileURLToPath(new URL("..", import.meta.url));
const PREFIX = `{wa-bench-pipeline-${randomBytes(3).toString("hex")}}`;

// A fresh scratch database: rows left by an earlier run would slow this one down.
const databaseUrl = await freshScratchDatabase(DB_NAME);
const env = {
  DATABASE_URL: databaseUrl,
  REDIS_URL,
  QUEUE_PREFIX: PREFIX,
  JWT_SECRET: randomBytes(32).toString("base64url"),
  LOG_LEVEL: "info",
  WORKER_QUEUES: "transactions,risk",
};

const sql = postgres(databaseUrl, { max: 4, onnotice: () => {} });

console.error(`seeding ${WALLETS.toLocaleString()} wallets, ${ALERTS.toLocaleString()} alerts, 2,000 labels…`);
const population = await seedPopulation(sql);
// Only the seeded tables. A table analyzed while empty gets its foreign-key checks planned as
// sequential scans in every session that checks one before the next analyze: the
// notifications → alert_events check then read up to 12,000 rows per notification. The
// tables the run fills stay never-analyzed, as on a new deployment, and autovacuum (or the
// stand-in below) analyzes them as they grow.
await sql`vacuum analyze tracked_wallets, alerts, address_state, risk_labels`;
console.error(`generating ${TRANSACTIONS.toLocaleString()} transactions…`);
const startTime = Math.floor(Date.now() / 1000) - 3600;
const warmup = generateTraffic(population, 5_000, startTime - 600, 4_000);
const traffic = generateTraffic(population, TRANSACTIONS, startTime, 4_000);
const storeOnlyTraffic = generateTraffic(population, STORE_ONLY, startTime - 1_200, 4_000);
const lateStoreTraffic = generateTraffic(population, STORE_ONLY, startTime - 2_400, 4_000);
const backlogTraffic = generateTraffic(population, BACKLOG, startTime + Math.ceil(TRANSACTIONS / 4_000) + 60, 4_000);

const config = loadConfig(env);
const deps = createDeps(config, { logger: createLogger("warn"), dbPoolSize: INGESTERS + 2 });

// From here on, what Postgres does for the pipeline is measured: with autovacuum, as deployed.
const vacuum = await standInForAutovacuum(databaseUrl);

console.error("measuring the ceilings…");
const ceilings = await measureCeilings(sql, REDIS_URL, PREFIX);

/** Stores `txs` with no worker evaluating them (their jobs are then removed): the ingest path's own rate and cost. */
async function storeAlone(txs: Transaction[]) {
  const cpuBefore = sampleCpu([]);
  const started = performance.now();
  await ingest(txs);
  const seconds = (performance.now() - started) / 1000;
  const cpu = cpuBetween(cpuBefore, sampleCpu([]));
  await sql`update ingest_batches set evaluated_at = now() where evaluated_at is null`;
  await deps.queues.transactions.obliterate({ force: true });
  const [size] = await sql<{ rows: number }[]>`select count(*)::int as rows from transactions`;
  const perTransaction = (component: "ingest" | "postgres" | "redis") => Math.round((cpu.seconds[component] * 1e6) / txs.length);
  return {
    transactions: txs.length,
    /** Rows in the table once stored. */
    tableRows: size!.rows,
    transactionsPerSecond: Math.round(txs.length / seconds),
    cpuMicrosecondsPerTransaction: { ingest: perTransaction("ingest"), postgres: perTransaction("postgres"), redis: perTransaction("redis") },
  };
}

// The ingest path alone (no worker running). These batches are then marked evaluated and their
// jobs removed; they are not part of the timed run.
console.error(`storing ${STORE_ONLY.toLocaleString()} transactions with no worker running…`);
const storeOnly = await storeAlone(storeOnlyTraffic);

// The worker processes, exactly as in production.
const workers: ChildProcess[] = [];
for (let i = 0; i < WORKERS; i++) {
  const profile = PROFILE_DIR ? ["--cpu-prof", `--cpu-prof-dir=${PROFILE_DIR}`] : [];
  const child = spawn(process.execPath, [...profile, "--import", "tsx", "src/bin/worker.ts"], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "inherit"],
  });
  await new Promise<void>((resolve) => {
    let output = "";
    child.stdout!.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes("worker started")) resolve();
    });
  });
  workers.push(child);
}

async function ingest(txs: Transaction[]): Promise<void> {
  let next = 0;
  const ingester = async () => {
    while (next < txs.length) {
      const start = next;
      next += BATCH;
      await storeTransactionBatch(deps, txs.slice(start, start + BATCH));
    }
  };
  await Promise.all(Array.from({ length: INGESTERS }, ingester));
}

async function allEvaluated(): Promise<void> {
  for (;;) {
    const [row] = await sql<{ open: number }[]>`select count(*)::int as open from ingest_batches where evaluated_at is null`;
    if (row!.open === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

// Warm-up: JIT, prepared statements, connections; then the timed run.
await ingest(warmup);
await allEvaluated();
const workerPids = workers.map((w) => w.pid!);
const rssPeak = workerPids.map(() => 0);
const rssTimer = setInterval(() => workerPids.forEach((pid, i) => (rssPeak[i] = Math.max(rssPeak[i]!, rssMb(pid)))), 200);
const [eventsBefore] = await sql<{ n: number }[]>`select count(*)::int as n from alert_events`;

console.error(`running: ${TRANSACTIONS.toLocaleString()} transactions in batches of ${BATCH}, ${WORKERS} worker processes…`);
const cpuBefore = sampleCpu(workerPids);
const started = performance.now();
await ingest(traffic);
const ingestSeconds = (performance.now() - started) / 1000;
await allEvaluated();
const seconds = (performance.now() - started) / 1000;
const cpu = cpuBetween(cpuBefore, sampleCpu(workerPids));

const [counts] = await sql<{ events: number; suppressed: number; notifications: number; scoreChanges: number; batches: number }[]>`
  select (select count(*)::int from alert_events) - ${eventsBefore!.n}::int as events,
         (select count(*)::int from alert_events where suppressed) as suppressed,
         (select count(*)::int from notifications) as notifications,
         (select count(*)::int from risk_score_history) as "scoreChanges",
         (select count(*)::int from ingest_batches) as batches`;
const byCondition = await sql<{ condition: string; n: number }[]>`
  select condition, count(*)::int as n from alert_events group by condition order by condition`;

// Evaluation alone: a backlog stored while the queue is paused, then evaluated (in groups).
console.error(`evaluating a stored backlog of ${BACKLOG.toLocaleString()} transactions…`);
await deps.queues.transactions.pause();
await ingest(backlogTraffic);
const backlogCpuBefore = sampleCpu(workerPids);
const backlogStarted = performance.now();
await deps.queues.transactions.resume();
await allEvaluated();
const backlogSeconds = (performance.now() - backlogStarted) / 1000;
const backlogCpu = cpuBetween(backlogCpuBefore, sampleCpu(workerPids));
clearInterval(rssTimer);
const vacuumReport = await vacuum.stop();

for (const worker of workers) worker.kill("SIGTERM");
await Promise.all(workers.map((w) => new Promise((resolve) => w.once("exit", resolve))));
console.error(`storing ${STORE_ONLY.toLocaleString()} more with no worker running, on the table the run filled…`);
const storeOnlyLate = await storeAlone(lateStoreTraffic);
// The benchmark's queue keys, counters and jobs: under its own prefix only.
await deletePrefixKeys(deps.redis, PREFIX);
await deps.close();
await sql.end();

const tps = Math.round(TRANSACTIONS / seconds);
const cpuMicrosecondsPerTransaction = Math.round((Object.values(cpu.seconds).reduce((sum, value) => sum + value, 0) * 1e6) / TRANSACTIONS);
const cpuBudgetMicroseconds = Math.round((os.cpus().length * 1e6) / TARGET_TPS);
const batchesPerSecond = Math.round((TRANSACTIONS / BATCH / seconds) * 10) / 10;
const result = {
  target: { transactionsPerSecond: TARGET_TPS },
  settings: { transactions: TRANSACTIONS, batch: BATCH, workerProcesses: WORKERS, ingesters: INGESTERS, wallets: WALLETS, alerts: ALERTS },
  pipeline: {
    transactionsPerSecond: tps,
    seconds: Math.round(seconds * 100) / 100,
    storedPerSecond: Math.round(TRANSACTIONS / ingestSeconds),
    batchesPerSecond,
    eventsPerSecond: Math.round((counts!.events / seconds) * 10) / 10,
    events: counts!.events,
    eventsByCondition: Object.fromEntries(byCondition.map((r) => [r.condition, r.n])),
    suppressed: counts!.suppressed,
    notifications: counts!.notifications,
    scoreChanges: counts!.scoreChanges,
    workerRssMb: rssPeak,
  },
  evaluateOnly: {
    transactions: BACKLOG,
    transactionsPerSecond: Math.round(BACKLOG / backlogSeconds),
    cpuMicrosecondsPerTransaction: Object.fromEntries(
      Object.entries(backlogCpu.seconds).map(([component, value]) => [component, Math.round((value * 1e6) / BACKLOG)]),
    ),
  },
  storeOnly,
  storeOnlyLate,
  ceilings,
  postgres: vacuumReport,
  ratios: {
    toTarget: Math.round((tps / TARGET_TPS) * 100) / 100,
    toPostgresUnnestInsert: Math.round((tps / ceilings.postgresUnnestRowsPerSecond) * 100) / 100,
    toPostgresValuesInsert: Math.round((tps / ceilings.postgresValuesRowsPerSecond) * 100) / 100,
    toPostgresUnnestTwoSessions: Math.round((tps / ceilings.postgresUnnestTwoSessionsRowsPerSecond) * 100) / 100,
    /** The CPU a transaction may cost at the target (the machine's cores over 40,000/s), over what it cost. */
    cpuBudgetToCost: Math.round((cpuBudgetMicroseconds / cpuMicrosecondsPerTransaction) * 100) / 100,
    batchJobsToBullmqNoop: Math.round((batchesPerSecond / ceilings.bullmqNoopJobsPerSecond) * 10000) / 10000,
  },
  cpu: {
    ...cpu,
    microsecondsPerTransaction: Object.fromEntries(
      Object.entries(cpu.seconds).map(([component, value]) => [component, Math.round((value * 1e6) / TRANSACTIONS)]),
    ),
  },
};
const rows: Row[] = [
  { measure: "pipeline (ingest+store+evaluate)", value: tps, unit: "tx/s", target: "≥ 40,000 tx/s", ratio: result.ratios.toTarget },
  { measure: "store, while evaluating", value: result.pipeline.storedPerSecond, unit: "tx/s" },
  { measure: "store only (no worker running)", value: storeOnly.transactionsPerSecond, unit: "tx/s" },
  { measure: `store only, at ${storeOnlyLate.tableRows.toLocaleString()} rows`, value: storeOnlyLate.transactionsPerSecond, unit: "tx/s" },
  { measure: "store only: Postgres CPU per transaction", value: storeOnly.cpuMicrosecondsPerTransaction.postgres, unit: "µs" },
  { measure: `store only, at ${storeOnlyLate.tableRows.toLocaleString()} rows: Postgres CPU per transaction`, value: storeOnlyLate.cpuMicrosecondsPerTransaction.postgres, unit: "µs" },
  { measure: `evaluate only (stored backlog of ${BACKLOG.toLocaleString()})`, value: result.evaluateOnly.transactionsPerSecond, unit: "tx/s" },
  { measure: "events", value: result.pipeline.eventsPerSecond, unit: "events/s" },
  { measure: "worker RSS (peak, largest)", value: Math.max(...rssPeak), unit: "MB" },
  { measure: "Postgres unnest insert (ceiling)", value: ceilings.postgresUnnestRowsPerSecond, unit: "rows/s", ratio: result.ratios.toPostgresUnnestInsert },
  { measure: "Postgres VALUES insert (ceiling)", value: ceilings.postgresValuesRowsPerSecond, unit: "rows/s", ratio: result.ratios.toPostgresValuesInsert },
  {
    measure: "Postgres unnest insert, 2 sessions (ceiling)",
    value: ceilings.postgresUnnestTwoSessionsRowsPerSecond,
    unit: "rows/s",
    ratio: result.ratios.toPostgresUnnestTwoSessions,
  },
  { measure: "BullMQ no-op jobs (ceiling)", value: ceilings.bullmqNoopJobsPerSecond, unit: "jobs/s" },
  { measure: "BullMQ bulk adds (ceiling)", value: ceilings.bullmqAddsPerSecond, unit: "jobs/s" },
  ...(["workers", "postgres", "redis", "ingest"] as const).map((component) => ({
    measure: `CPU per transaction: ${component}`,
    value: result.cpu.microsecondsPerTransaction[component]!,
    unit: "µs",
  })),
  {
    measure: "CPU per transaction: all of them",
    value: cpuMicrosecondsPerTransaction,
    unit: "µs",
    target: `≤ ${cpuBudgetMicroseconds} µs`,
    ratio: result.ratios.cpuBudgetToCost,
  },
];
if (vacuumReport.autovacuum === "off") {
  console.error(`Postgres runs with autovacuum off: a stand-in vacuumed ${vacuumReport.standIn.vacuums} and analyzed ${vacuumReport.standIn.analyzes} times`);
}
await writeReport("pipeline", result, rows);
