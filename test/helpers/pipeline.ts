// Detection-pipeline test kit: wallets and alerts made through the public API, real BullMQ
// workers (in this process, or as separate worker processes), and polling of Postgres until
// the pipeline has done its work.
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { Transaction } from "../../src/domain/types.ts";
import { createChannels } from "../../src/notify/channels/index.ts";
import { runWorkers, type RunningWorkers } from "../../src/queue/run-workers.ts";
import type { QueueName } from "../../src/queue/names.ts";
import { testEnv, type TestApp } from "./app.ts";
import { bearer, ingestTransactions, makeTransaction } from "./seed.ts";
import { newId } from "../../src/ids.ts";
import { randomAddress } from "./chain.ts";
import { waitFor } from "./wait.ts";

export { waitFor };

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

export type AlertBody = {
  walletId: string;
  condition: string;
  threshold?: number;
  token?: string;
  cooldownSeconds?: number;
  notificationMethod?: "webhook" | "email" | "sms";
};

/** POST /v1/wallets; returns walletId and address. */
export async function track(t: TestApp, token: string, address = randomAddress(), alias: string | null = null) {
  const res = await t.app.inject({ method: "POST", url: "/v1/wallets", headers: bearer(token), payload: { address, ...(alias ? { alias } : {}) } });
  if (res.statusCode !== 201) throw new Error(`POST /v1/wallets answered ${res.statusCode}: ${res.body}`);
  return res.json() as { walletId: string; address: string };
}

/** POST /v1/risk/alerts with a webhook to a closed loopback port (delivery is not under test here). */
export async function createAlert(t: TestApp, token: string, body: AlertBody): Promise<string> {
  const method = body.notificationMethod ?? "webhook";
  const payload = {
    ...body,
    notificationMethod: method,
    ...(method === "webhook" ? { webhookUrl: "http://127.0.0.1:9/hook" } : {}),
    ...(method === "email" ? { recipient: "ops@example.com" } : {}),
  };
  const res = await t.app.inject({ method: "POST", url: "/v1/risk/alerts", headers: bearer(token), payload });
  if (res.statusCode !== 201) throw new Error(`POST /v1/risk/alerts answered ${res.statusCode}: ${res.body}`);
  return (res.json() as { alertId: string }).alertId;
}

export async function putLabels(
  t: TestApp,
  token: string,
  labels: Array<{ address: string; category: string; score: number; source?: string }>,
) {
  return t.app.inject({ method: "PUT", url: "/v1/risk/labels", headers: bearer(token), payload: { labels } });
}

/** A transaction of `from` → `to`, at `blockTime`, otherwise makeTransaction's defaults. */
export const tx = (overrides: Partial<Transaction>): Transaction => makeTransaction(overrides);

/**
 * `count` tracked wallets of "alice", each with one alert of `condition` at `threshold`
 * (webhook to a closed loopback port), written straight to Postgres: for tests that need many.
 * Start the workers afterwards, so that they load these alerts.
 */
export async function seedWalletsWithAlert(
  t: TestApp,
  count: number,
  condition: string,
  threshold: number,
): Promise<Array<{ address: string; alertId: string }>> {
  const wallets = Array.from({ length: count }, () => ({ address: randomAddress(), alertId: newId("alr") }));
  const walletIds = wallets.map(() => newId("wal"));
  await t.deps.sql`
    insert into tracked_wallets (id, owner, address)
    select * from unnest(${walletIds}::text[], ${wallets.map(() => "alice")}::text[], ${wallets.map((w) => w.address)}::text[])`;
  await t.deps.sql`
    insert into alerts (id, owner, wallet_id, condition, threshold, notification_method, webhook_url)
    select id, 'alice', wallet_id, ${condition}, ${threshold}, 'webhook', 'http://127.0.0.1:9/hook'
    from unnest(${wallets.map((w) => w.alertId)}::text[], ${walletIds}::text[]) as u(id, wallet_id)`;
  return wallets;
}

/** Real workers on the test app's queue prefix, in this process. */
export function startWorkers(t: TestApp, queues: QueueName[] = ["transactions", "risk"]): RunningWorkers {
  return runWorkers({ ...t.deps, channels: createChannels(t.config, t.deps.logger) }, { queues });
}

/** Until every ingest batch is evaluated (score changes may still wait: their workers may be stopped on purpose). */
export async function batchesEvaluated(t: TestApp): Promise<void> {
  await waitFor(
    "every batch to be evaluated",
    async () => (await t.deps.sql`select 1 from ingest_batches where evaluated_at is null`).length === 0,
    20_000,
  );
}

/**
 * One batch of sends from `wallet`, one at each of these minutes after `start` (Unix seconds),
 * to fresh addresses, evaluated before it returns; their signatures.
 */
export async function sendsAtMinutes(t: TestApp, token: string, wallet: string, start: number, minutes: number[]): Promise<string[]> {
  const txs = minutes.map((minute) => tx({ from: wallet, to: randomAddress(), amount: 1, blockTime: start + minute * 60 }));
  await ingestTransactions(t, token, txs);
  await settled(t);
  return txs.map((item) => item.signature);
}

/** Resolves once every stored batch is evaluated and no score change is left unevaluated. */
export async function settled(t: TestApp, timeoutMs = 20_000): Promise<void> {
  await waitFor(
    "the pipeline to evaluate every batch and score change",
    async () => {
      const [row] = await t.deps.sql<{ open: number }[]>`
        select ((select count(*) from ingest_batches where evaluated_at is null)
              + (select count(*) from risk_score_history where evaluated_at is null))::int as open`;
      return row!.open === 0;
    },
    timeoutMs,
  );
}

export type EventRow = { alertId: string; dedupeKey: string; condition: string; observed: number; suppressed: boolean };

export async function eventsOf(t: TestApp, alertId: string): Promise<EventRow[]> {
  return t.deps.sql<EventRow[]>`
    select alert_id as "alertId", dedupe_key as "dedupeKey", condition, observed::float8 as observed, suppressed
    from alert_events where alert_id = ${alertId} order by created_at, id`;
}

/** A worker process (`src/bin/worker.ts`) on the test app's database and queue prefix. */
export function spawnWorker(t: TestApp, env: Record<string, string> = {}): ChildProcess & { output: () => string } {
  return spawnProcess(t, "src/bin/worker.ts", env);
}

/** The API as a process of its own (give it a PORT), its output collected like a worker's. */
export function spawnApi(t: TestApp, env: Record<string, string>): ChildProcess & { output: () => string } {
  return spawnProcess(t, "src/bin/api.ts", env);
}

function spawnProcess(t: TestApp, script: string, env: Record<string, string>): ChildProcess & { output: () => string } {
  let output = "";
  const child = spawn(process.execPath, ["--import", "tsx", script], {
    cwd: ROOT,
    env: {
      ...process.env,
      ...testEnv({ DATABASE_URL: t.config.databaseUrl, QUEUE_PREFIX: t.config.queuePrefix, LOG_LEVEL: "warn", ...env }),
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  return Object.assign(child, { output: () => output });
}

export function exited(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (child.exitCode !== null || child.signalCode !== null) {
    return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  }
  return new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
}

/**
 * The child's exit, or "still running" once `ms` have passed (it is then killed and waited for:
 * the test has failed, and a process that outlives its test would hold its ports and databases).
 */
export async function exitWithin(
  child: ChildProcess,
  ms: number,
): Promise<{ code: number | null; signal: NodeJS.Signals | null } | "still running"> {
  const stillRunning = new Promise<"still running">((resolve) => setTimeout(() => resolve("still running"), ms).unref());
  const outcome = await Promise.race([exited(child), stillRunning]);
  if (outcome === "still running") {
    child.kill("SIGKILL");
    await exited(child);
  }
  return outcome;
}
