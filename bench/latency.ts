// npm run bench:latency — what a customer's endpoint sees (DESIGN.md section 9), not a test:
//   detection latency, from the POST of a transaction to the API until its signed webhook is
//   received, p99 ≤ 100 ms at 1,000 tx/s; and the worker's RSS with 100,000 active alerts
//   (≤ 300 MB). The API and the worker run as their own processes, as in production.
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import postgres from "postgres";
import { Webhook } from "standardwebhooks";
import { base58Encode } from "../src/domain/base58.ts";
import type { Transaction } from "../src/domain/types.ts";
import { mintToken } from "../src/http/mint-token.ts";
import { generateWebhookSecret } from "../src/notify/webhook-secret.ts";
import { freePort } from "../test/helpers/ports.ts";
import { deletePrefixKeysAt } from "../test/helpers/redis-keys.ts";
import { percentiles } from "./lib/percentiles.ts";
import { writeReport, type Row } from "./lib/report.ts";
import { freshScratchDatabase } from "./lib/scratch-db.ts";
import { rssMb } from "./pipeline-cpu.ts";

const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const DB_NAME = "wallet_alerts_bench_latency";
const WALLETS = 10_000;
const ALERTS_PER_WALLET = 10; // 100,000 active alerts
const RATE = Number(process.env.BENCH_RATE ?? 1_000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 30);
const TICK_MS = 100;
const ROOT = fileURLToPath(new URL("..", import.meta.url));
const PREFIX = `{wa-bench-latency-${randomBytes(3).toString("hex")}}`;
const JWT_SECRET = randomBytes(32).toString("base64url");
const SECRET = generateWebhookSecret();
const address = () => base58Encode(randomBytes(32));
const signature = () => base58Encode(randomBytes(64));

// The customer's endpoint: verifies every delivery and notes when each transaction's arrived.
const sentAt = new Map<string, number>();
const latencies: number[] = [];
let unverified = 0;
const verifier = new Webhook(SECRET);
const receiver = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on("data", (chunk: Buffer) => chunks.push(chunk));
  request.on("end", () => {
    const now = performance.now();
    try {
      const payload = verifier.verify(Buffer.concat(chunks).toString("utf8"), request.headers as Record<string, string>) as {
        data: { transaction?: { signature: string } };
      };
      const sent = sentAt.get(payload.data.transaction?.signature ?? "");
      if (sent !== undefined) latencies.push(now - sent);
    } catch {
      unverified++;
    }
    response.writeHead(204).end();
  });
});
await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

// A fresh database: 10,000 wallets, 100,000 alerts. One large_transfer webhook alert per
// wallet fires; the other nine (every condition) are active and evaluated but never reached.
const databaseUrl = await freshScratchDatabase(DB_NAME);
const sql = postgres(databaseUrl, { max: 2, onnotice: () => {} });
const wallets = Array.from({ length: WALLETS }, address);
const walletIds = wallets.map((_, i) => `wal_latency${String(i).padStart(15, "0")}`);
await sql`insert into tracked_wallets (id, owner, address) select id, 'bench', a from unnest(${walletIds}::text[], ${wallets}::text[]) as t(id, a)`;
await sql`insert into address_state (address) select unnest(${wallets}::text[])`;
await sql`
  insert into alerts (id, owner, wallet_id, condition, threshold, notification_method, webhook_url, webhook_secret, baseline_score)
  select 'alr_latency' || w.ord || '_' || k, 'bench', w.id,
         (array['large_transfer','suspicious_counterparty','unusual_activity','risk_score_increase'])[1 + k % 4],
         case k % 4 when 0 then case when k = 0 then 1000 else 1e15 end when 1 then 100 when 2 then 1000000 else 100 end,
         'webhook', ${hookUrl}, ${SECRET}, 0
  from unnest(${walletIds}::text[]) with ordinality as w(id, ord), generate_series(0, ${ALERTS_PER_WALLET - 1}) as k`;
const [{ alerts }] = await sql<[{ alerts: number }]>`select count(*)::int as alerts from alerts where status = 'active'`;

const env = {
  ...process.env,
  DATABASE_URL: databaseUrl,
  REDIS_URL,
  QUEUE_PREFIX: PREFIX,
  JWT_SECRET,
  LOG_LEVEL: "warn",
  RATE_LIMIT_PER_MINUTE: "10000000",
  WEBHOOK_ALLOW_HTTP: "true",
  WEBHOOK_ALLOWED_CIDRS: "127.0.0.0/8",
  HOST: "127.0.0.1",
  PORT: String(await freePort()),
};
const start = (script: string): ChildProcess =>
  spawn(process.execPath, ["--import", "tsx", script], { cwd: ROOT, env, stdio: ["ignore", "ignore", "inherit"] });
const api = start("src/bin/api.ts");
const worker = start("src/bin/worker.ts");
const apiUrl = `http://127.0.0.1:${env.PORT}`;
for (let i = 0; i < 120 && !(await fetch(`${apiUrl}/readyz`).then((r) => r.ok, () => false)); i++) {
  await new Promise((r) => setTimeout(r, 250));
}
const token = await mintToken(JWT_SECRET, { sub: "bench", scope: "ingest:write", ttlSeconds: 3600 });

let rssPeak = 0;
const rssTimer = setInterval(() => (rssPeak = Math.max(rssPeak, rssMb(worker.pid!))), 200);
let slot = 300_000_000;
let posted = 0;
let refused = 0;
const perTick = Math.round((RATE * TICK_MS) / 1000);
const post = async (largeEvery: number) => {
  const now = Math.floor(Date.now() / 1000);
  const batch: Transaction[] = Array.from({ length: perTick }, (_, i) => {
    const from = wallets[Math.floor(Math.random() * WALLETS)]!;
    return {
      signature: signature(),
      type: "transfer",
      amount: i % largeEvery === 0 ? 5_000 : 1 + Math.random() * 100,
      token: "SOL",
      from,
      to: address(),
      blockTime: now,
      slot: slot++,
      fee: 0.000005,
      status: "success",
    };
  });
  const sent = performance.now();
  for (const tx of batch) if (tx.amount >= 1000) sentAt.set(tx.signature, sent);
  const response = await fetch(`${apiUrl}/v1/ingest/transactions`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ transactions: batch }),
  });
  if (response.status === 202) posted += batch.length;
  else refused += batch.length;
};

// Warm-up (JIT, pools), then the measured run at RATE tx/s: one batch every 100 ms, about
// one in a hundred transactions large enough to fire its wallet's webhook alert.
for (let i = 0; i < 20; i++) await post(100);
await new Promise((r) => setTimeout(r, 2_000));
latencies.length = 0;
sentAt.clear();
const runStart = performance.now();
const inFlight: Promise<void>[] = [];
for (let tick = 0; tick < (SECONDS * 1000) / TICK_MS; tick++) {
  inFlight.push(post(100));
  const next = runStart + (tick + 1) * TICK_MS;
  await new Promise((r) => setTimeout(r, Math.max(0, next - performance.now())));
}
await Promise.all(inFlight);
const expected = sentAt.size;
for (let i = 0; i < 100 && latencies.length < expected; i++) await new Promise((r) => setTimeout(r, 100));
clearInterval(rssTimer);
const achievedRate = posted / ((performance.now() - runStart) / 1000);

for (const child of [api, worker]) child.kill("SIGTERM");
await Promise.all([api, worker].map((child) => new Promise((resolve) => child.once("exit", resolve))));
receiver.close();
await deletePrefixKeysAt(REDIS_URL, PREFIX);
await sql.end();

const tenths = (ms: number) => Math.round(ms * 10) / 10;
const latency = percentiles(latencies);
const [p50, p90, p99, max] = [latency.p50, latency.p90, latency.p99, latency.max].map(tenths) as [number, number, number, number];
const rows: Row[] = [
  { measure: "ingest rate achieved", value: achievedRate, unit: "tx/s", target: `${RATE} tx/s` },
  { measure: "detection latency p50 (POST → webhook)", value: p50, unit: "ms" },
  { measure: "detection latency p99", value: p99, unit: "ms", target: "≤ 100 ms", ratio: p99 / 100 },
  { measure: "webhooks received / expected", value: latencies.length, unit: `of ${expected}` },
  { measure: `worker RSS peak (${alerts.toLocaleString()} active alerts)`, value: rssPeak, unit: "MB", target: "≤ 300 MB", ratio: rssPeak / 300 },
];
await writeReport(
  "latency",
  {
    setup: { wallets: WALLETS, activeAlerts: alerts, rate: RATE, seconds: SECONDS, batchEveryMs: TICK_MS },
    figures: {
      achievedRate,
      latencyMs: { p50, p90, p99, max },
      webhooksReceived: latencies.length,
      webhooksExpected: expected,
      unverified,
      refusedTransactions: refused,
      workerRssPeakMb: rssPeak,
    },
    ratios: { latencyP99ToCeiling: p99 / 100, workerRssToCeiling: rssPeak / 300 },
    targets: { latencyP99Ms: 100, workerRssMb: 300 },
  },
  rows,
);
