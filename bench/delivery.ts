// npm run bench:delivery [-- N]: webhook delivery throughput and latency (DESIGN.md section 9:
// ≥ 3,000 webhooks/s to a local receiver). Real PostgreSQL (a scratch database), real Redis
// (a scratch queue prefix), the production processor with one pooled dispatcher, and a
// receiver in its own process that verifies every signature with standardwebhooks.
//
// Two phases:
//   burst  N notifications written (1,000 per multi-row insert, as the pipeline writes them)
//          and enqueued as fast as possible; delivered/s = N / (last receipt − first write).
//   paced  1,000 notifications/s for 5 s; latency from row creation to receipt, without the
//          queueing delay that a burst adds by construction.
// HISTORY (default 0: a new deployment) notifications already delivered before the run, and the
// tables analyzed, as on a service that has been running: its statements are planned on tables
// of that size.
// Output: one JSON document, then a short table. Not a test.
import { fork } from "node:child_process";
import { randomBytes } from "node:crypto";
import { cpus, totalmem } from "node:os";
import { fileURLToPath } from "node:url";
import { Worker } from "bullmq";
import { loadConfig } from "../src/config.ts";
import { createDeps } from "../src/deps.ts";
import { newId } from "../src/ids.ts";
import { createLogger } from "../src/logger.ts";
import { createChannels } from "../src/notify/channels/index.ts";
import { generateWebhookSecret } from "../src/notify/webhook-secret.ts";
import { enqueueDeliveries } from "../src/queue/deliveries.ts";
import { DELIVERY_CONCURRENCY, makeDeliverProcessor } from "../src/queue/jobs/deliver.ts";
import { DELIVERY_QUEUE } from "../src/queue/names.ts";
import { samplePayload } from "../test/helpers/delivery.ts";
import { deletePrefixKeysAt } from "../test/helpers/redis-keys.ts";
import { percentiles } from "./lib/percentiles.ts";
import { writeReport, type Row } from "./lib/report.ts";
import { dropScratchDatabase, freshScratchDatabase } from "./lib/scratch-db.ts";
import { pidsNamed, processCpu } from "./pipeline-cpu.ts";
import { createWorkerRedis } from "../src/redis.ts";

const N = Number(process.argv[2] ?? process.env.N ?? 20_000);
const ALERTS = 100;
const INSERT_BATCH = 1_000;
const CONCURRENCY = Number(process.env.CONCURRENCY ?? DELIVERY_CONCURRENCY.webhook);
const PACED_RATE = 1_000;
const PACED_SECONDS = 5;
const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const WAIT_LIMIT_MS = 300_000;
const HISTORY = Number(process.env.HISTORY ?? 0);

type Report = { received: number; failedVerification: number; duplicates: number; lastReceivedAt: number; latencies: number[] };

const database = `wa_bench_delivery_${process.pid}`;
const databaseUrl = await freshScratchDatabase(database);

const config = loadConfig({
  DATABASE_URL: databaseUrl,
  REDIS_URL,
  JWT_SECRET: randomBytes(32).toString("hex"),
  LOG_LEVEL: "warn",
  WEBHOOK_ALLOW_HTTP: "true",
  WEBHOOK_ALLOWED_CIDRS: "127.0.0.0/8",
  QUEUE_PREFIX: `{wa-bench-${process.pid}}`,
});
const logger = createLogger(config.logLevel);
const deps = createDeps(config, { logger, dbPoolSize: 20 });

// The receiver process.
const receiver = fork(fileURLToPath(new URL("./delivery-receiver.ts", import.meta.url)), [], {
  execArgv: ["--import", "tsx"],
  stdio: ["ignore", "inherit", "inherit", "ipc"],
});
const ask = <T>(message: object): Promise<T> =>
  new Promise((resolve) => {
    receiver.once("message", (answer) => resolve(answer as T));
    receiver.send(message);
  });
const { port } = await new Promise<{ port: number }>((resolve) => receiver.once("message", (m) => resolve(m as { port: number })));

// Alerts: one wallet and one webhook alert each, every alert with its own secret.
const secrets: Record<string, string> = {};
const alertIds: string[] = [];
const walletOf = new Map<string, { walletId: string; address: string }>();
for (let i = 0; i < ALERTS; i++) {
  const walletId = newId("wal");
  const alertId = newId("alr");
  const address = randomBytes(16).toString("hex");
  const secret = generateWebhookSecret();
  await deps.sql`insert into tracked_wallets (id, owner, address, alias) values (${walletId}, 'bench', ${address}, ${`Wallet ${i}`})`;
  await deps.sql`
    insert into alerts (id, owner, wallet_id, condition, threshold, notification_method, webhook_url, webhook_secret)
    values (${alertId}, 'bench', ${walletId}, 'large_transfer', 10000, 'webhook', ${`http://127.0.0.1:${port}/hook/${alertId}`}, ${secret})`;
  secrets[alertId] = secret;
  alertIds.push(alertId);
  walletOf.set(alertId, { walletId, address });
}
await ask({ secrets });

if (HISTORY > 0) {
  await deps.sql`
    insert into notifications (id, alert_id, channel, destination, payload, status, attempt_count, created_at, updated_at, delivered_at)
    select 'ntf_history_' || i, (${alertIds}::text[])[1 + i % ${ALERTS}], 'webhook', 'http://127.0.0.1/history',
           jsonb_build_object('type', 'risk_alert.triggered', 'pad', repeat('x', 900)), 'delivered', 1,
           now() - interval '1 day', now() - interval '1 day', now() - interval '1 day'
    from generate_series(1, ${HISTORY}::int) as i`;
  await deps.sql`
    insert into delivery_attempts (notification_id, at, duration_ms, status_code, response_body)
    select id, delivered_at, 20, 200, 'ok' from notifications where id like 'ntf_history_%'`;
  await deps.sql`vacuum analyze notifications, delivery_attempts, alerts`;
}

const channels = createChannels(config, logger);
const worker = new Worker(DELIVERY_QUEUE.webhook, makeDeliverProcessor({ ...deps, channels }, "webhook"), {
  connection: createWorkerRedis(config.redisUrl),
  prefix: config.queuePrefix,
  concurrency: CONCURRENCY,
});
worker.on("error", (error) => logger.warn({ err: error }, "worker error"));

/** Writes `count` pending notifications in multi-row inserts and enqueues them, as the pipeline does. */
async function createNotifications(count: number): Promise<void> {
  for (let done = 0; done < count; done += INSERT_BATCH) {
    const size = Math.min(INSERT_BATCH, count - done);
    const now = new Date();
    const rows = Array.from({ length: size }, (_, i) => {
      const alertId = alertIds[(done + i) % ALERTS]!;
      const wallet = walletOf.get(alertId)!;
      const payload = samplePayload({ alertId, walletId: wallet.walletId, address: wallet.address });
      return { id: newId("ntf", now.getTime()), alertId, url: `http://127.0.0.1:${port}/hook/${alertId}`, payload: JSON.stringify(payload) };
    });
    await deps.sql`
      insert into notifications (id, alert_id, channel, destination, payload, status, created_at, updated_at)
      select id, alert_id, 'webhook', destination, payload::jsonb, 'pending', ${now.toISOString()}::timestamptz, ${now.toISOString()}::timestamptz
      from unnest(${rows.map((r) => r.id)}::text[], ${rows.map((r) => r.alertId)}::text[],
                  ${rows.map((r) => r.url)}::text[], ${rows.map((r) => r.payload)}::text[]) as t(id, alert_id, destination, payload)`;
    await enqueueDeliveries(deps.queues, rows.map((r) => ({ notificationId: r.id, channel: "webhook" as const })));
  }
}

async function waitForReceipts(target: number): Promise<void> {
  const deadline = Date.now() + WAIT_LIMIT_MS;
  for (;;) {
    const { received, failedVerification } = await ask<{ received: number; failedVerification: number }>({ count: true });
    if (received + failedVerification >= target) return;
    if (Date.now() > deadline) throw new Error(`only ${received} of ${target} webhooks arrived within ${WAIT_LIMIT_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

// Warm-up: connections, prepared statements, JIT.
await createNotifications(1_000);
await waitForReceipts(1_000);
await ask<Report>({ report: true, reset: true });

// CPU seconds spent per component during the burst (Redis is shared with whatever else runs).
async function backendPids(): Promise<number[]> {
  const rows = await deps.sql<{ pid: number }[]>`select pid from pg_stat_activity where datname = ${database}`;
  return rows.map((row) => row.pid);
}
async function cpuSnapshot() {
  const sum = (pids: number[]) => pids.reduce((total, pid) => total + processCpu(pid), 0);
  const usage = process.cpuUsage();
  return {
    worker: (usage.user + usage.system) / 1e6,
    receiver: processCpu(receiver.pid!),
    postgres: sum(await backendPids()),
    redis: sum(pidsNamed("redis-server")),
  };
}

// Burst.
const cpuBefore = await cpuSnapshot();
const burstStart = Date.now();
await createNotifications(N);
const burstWritten = Date.now();
await waitForReceipts(N);
const burst = await ask<Report>({ report: true, reset: true });
const cpuAfter = await cpuSnapshot();
const cpuMsPerWebhook = Object.fromEntries(
  Object.entries(cpuAfter).map(([name, seconds]) => [name, Number((((seconds - cpuBefore[name as keyof typeof cpuBefore]) * 1000) / N).toFixed(3))]),
);
const burstSeconds = (burst.lastReceivedAt - burstStart) / 1000;

// Paced.
const pacedTotal = PACED_RATE * PACED_SECONDS;
const tick = 50;
const perTick = (PACED_RATE * tick) / 1000;
const pacedStart = Date.now();
for (let sent = 0; sent < pacedTotal; sent += perTick) {
  await createNotifications(perTick);
  const next = pacedStart + ((sent + perTick) / PACED_RATE) * 1000;
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, next - Date.now())));
}
await waitForReceipts(pacedTotal);
const paced = await ask<Report>({ report: true, reset: true });

const [states] = await deps.sql<{ delivered: number; open: number; failed: number; attempts: number }[]>`
  select count(*) filter (where status = 'delivered')::int as delivered,
         count(*) filter (where status in ('pending', 'retrying'))::int as open,
         count(*) filter (where status = 'failed')::int as failed,
         (select count(*)::int from delivery_attempts) as attempts
  from notifications`;

const result = {
  benchmark: "delivery",
  target: { webhooksPerSecond: 3_000 },
  settings: { notifications: N, history: HISTORY, alerts: ALERTS, concurrency: CONCURRENCY, insertBatch: INSERT_BATCH, workerProcesses: 1, receiverProcesses: 1 },
  burst: {
    webhooksPerSecond: Math.round(N / burstSeconds),
    seconds: Number(burstSeconds.toFixed(2)),
    writeSeconds: Number(((burstWritten - burstStart) / 1000).toFixed(2)),
    latencyMs: percentiles(burst.latencies),
    verified: burst.received,
    failedVerification: burst.failedVerification,
    duplicates: burst.duplicates,
    /** CPU milliseconds per webhook, per process (the worker also writes the rows; Redis is shared). */
    cpuMsPerWebhook,
  },
  paced: {
    ratePerSecond: PACED_RATE,
    notifications: pacedTotal,
    latencyMs: percentiles(paced.latencies),
    verified: paced.received,
    failedVerification: paced.failedVerification,
  },
  database: states,
  meetsTarget: N / burstSeconds >= 3_000,
  machine: { cpus: cpus().length, model: cpus()[0]?.model, memoryGiB: Math.round(totalmem() / 2 ** 30), node: process.version },
};

const { machine: _machine, ...figures } = result;
const rows: Row[] = [
  { measure: "signed webhooks delivered (burst)", value: result.burst.webhooksPerSecond, unit: "webhooks/s", target: "≥ 3,000/s", ratio: result.burst.webhooksPerSecond / 3_000 },
  { measure: "burst: row → receipt p99 (queueing included)", value: result.burst.latencyMs.p99, unit: "ms" },
  { measure: `paced ${PACED_RATE}/s: row → receipt p50`, value: result.paced.latencyMs.p50, unit: "ms" },
  { measure: `paced ${PACED_RATE}/s: row → receipt p99`, value: result.paced.latencyMs.p99, unit: "ms" },
  { measure: "verified by the receiver", value: result.burst.verified + result.paced.verified, unit: `of ${N + pacedTotal}` },
];
await writeReport("delivery", figures, rows);

await worker.close();
await channels.close();
await deps.close();
// Every queue's keys under this run's prefix, once the queues are closed (closing writes some).
await deletePrefixKeysAt(config.redisUrl, config.queuePrefix);
receiver.kill();
await dropScratchDatabase(database);
process.exit(0);
