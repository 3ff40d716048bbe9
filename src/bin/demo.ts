// npm run demo — the whole service on one machine with nothing but PostgreSQL and Redis:
// migrates, seeds a demo caller, starts the API and the worker as separate processes, a
// webhook sink that verifies signatures, and a synthetic Solana feed in which every alert
// condition fires within the first minute on every channel. Ctrl-C stops it all.
//
// It runs on its own database, Redis, port and queue prefix (DEMO_DATABASE_URL, DEMO_REDIS_URL,
// DEMO_PORT, DEMO_QUEUE_PREFIX; src/demo/settings.ts), never on the service's DATABASE_URL and
// REDIS_URL, and refuses a database that holds other callers' wallets or alerts.
//
// With DEMO_API_URL set it attaches to an API and worker that already run (docker compose
// does this): no migration, no child processes, and no refusal of the service's customers'
// data; the sink listens on DEMO_SINK_LISTEN (host:port) and is announced to the API as
// DEMO_SINK_URL.
//
// Either way, each start deletes the wallets (and their alerts) that an earlier start seeded,
// tagged DEMO_TAG, and nothing else: not the wallets made with the token it prints.
import { randomBytes } from "node:crypto";
import postgres from "postgres";
import { createDb } from "../db/client.ts";
import { runMigrations } from "../db/migrate.ts";
import { loadJwtConfig } from "../config.ts";
import { mintToken } from "../http/mint-token.ts";
import { createApiClient, type ApiCall } from "../demo/api-client.ts";
import { watchDeliveries } from "../demo/delivery-log.ts";
import { bannerLines } from "../demo/banner.ts";
import { foreignDatabaseRefusal, otherCallersData } from "../demo/database-guard.ts";
import { DEMO_TAG, removeEarlierRun } from "../demo/earlier-run.ts";
import { ChildExited, killChild, lastWords, listenProbe, startChild, stopChild, waitForReady, type Child } from "../demo/processes.ts";
import { demoSettings } from "../demo/settings.ts";
import { orExit } from "./config-or-exit.ts";
import {
  DEMO_ALERTS,
  DEMO_CHANNELS,
  accountSnapshots,
  createCast,
  demoLabels,
  scriptedBatches,
  type DemoCast,
} from "../demo/scenario.ts";
import { startWebhookSink, type WebhookSink } from "../demo/webhook-sink.ts";
import { startBackgroundFeed } from "../demo/feed.ts";
import { redactUrl } from "../redact-url.ts";
import { mintedTokens, renewEveryMs } from "../sim/tokens.ts";

const DEMO_CALLER = "demo";
const DEMO_EMAIL = "risk-desk@example.com";
/** The printed token's lifetime; the demo's own requests use tokens it mints again before then. */
const TOKEN_TTL_SECONDS = 24 * 3600;
const DEMO_PHONE = "+14155550123";

// Made up only when unset, and then shown in the banner: nothing else would tell it.
const adminPassword = process.env.ADMIN_PASSWORD
  ? { value: process.env.ADMIN_PASSWORD, generated: false }
  : { value: randomBytes(18).toString("base64url"), generated: true };
const settings = orExit(() =>
  demoSettings({
    DEMO_DATABASE_URL: process.env.DEMO_DATABASE_URL,
    DEMO_REDIS_URL: process.env.DEMO_REDIS_URL,
    DEMO_PORT: process.env.DEMO_PORT,
    DEMO_QUEUE_PREFIX: process.env.DEMO_QUEUE_PREFIX,
    DEMO_API_URL: process.env.DEMO_API_URL,
    DATABASE_URL: process.env.DATABASE_URL,
  }),
);
/** What the API and worker children get: the demo's own connections, port and prefix, never the service's. */
const env = {
  DATABASE_URL: settings.databaseUrl,
  REDIS_URL: settings.redisUrl,
  PORT: String(settings.port),
  JWT_SECRET: process.env.JWT_SECRET ?? randomBytes(32).toString("base64url"),
  ADMIN_USER: process.env.ADMIN_USER ?? "admin",
  ADMIN_PASSWORD: adminPassword.value,
  QUEUE_PREFIX: settings.queuePrefix,
  LOG_LEVEL: process.env.LOG_LEVEL ?? "warn",
  // The demo stops its API with SIGTERM, and no load balancer stands in front of it: no wait.
  SHUTDOWN_DELAY: "0s",
  // The demo's webhook sink listens on loopback, which the SSRF guard refuses unless opened.
  WEBHOOK_ALLOW_HTTP: "true",
  WEBHOOK_ALLOWED_CIDRS: "127.0.0.0/8,::1/128",
  // Every channel with nothing configured: email to .eml files, SMS to the worker's log, opted
  // into by name (the service never falls back on its own); SMTP_URL or TWILIO_* send for real.
  EMAIL_TRANSPORT: process.env.EMAIL_TRANSPORT || (process.env.SMTP_URL ? "" : "outbox"),
  SMS_TRANSPORT: process.env.SMS_TRANSPORT || (process.env.TWILIO_ACCOUNT_SID ? "" : "log"),
};
const attachTo = settings.attachTo;
const apiUrl = attachTo ?? `http://127.0.0.1:${env.PORT}`;
/** The address the API child listens on (its HOST, which it inherits). */
const listenHost = process.env.HOST || "0.0.0.0";
/** Where a person reaches the API (in compose: the published port, not the service name). */
const publicUrl = process.env.DEMO_PUBLIC_URL ?? apiUrl;
const [sinkHost, sinkPort] = (process.env.DEMO_SINK_LISTEN ?? "127.0.0.1:0").split(":");
const say = (line: string) => console.log(`${new Date().toISOString().slice(11, 19)}  ${line}`);

const children: Child[] = [];
let sink: WebhookSink | undefined;
const stops: Array<() => void> = [];
let stopping = false;

async function main(): Promise<void> {
  // First, before anything is created or written: a server already on the port would be taken
  // for the demo's API (its /readyz answered, the seeding went to it).
  if (!attachTo) await ensurePortFree();
  if (!attachTo) await ensureDatabase(env.DATABASE_URL);
  const { sql } = createDb(env.DATABASE_URL, { max: 2 });
  stops.push(() => void sql.end({ timeout: 2 }));
  // Only where the demo migrates and starts a worker itself: attached, the database is the
  // service's, and its customers' data is expected there (see database-guard.ts).
  if (!attachTo) {
    const refusal = foreignDatabaseRefusal(await otherCallersData(sql, DEMO_CALLER), {
      shownUrl: redactUrl(env.DATABASE_URL),
      setting: settings.databaseSetting,
      caller: DEMO_CALLER,
    });
    if (refusal) throw new Error(refusal);
    await runMigrations(env.DATABASE_URL);
  }

  sink = await startWebhookSink((delivery) => {
    const mark = delivery.verified ? "signature verified" : "SIGNATURE NOT VERIFIED";
    say(`webhook delivered → sink (${mark}, webhook-id ${delivery.webhookId})  [${delivery.payload.data?.condition}] ${delivery.payload.data?.reason ?? delivery.payload.type}`);
  }, { host: sinkHost ?? "127.0.0.1", port: Number(sinkPort ?? 0), publicUrl: process.env.DEMO_SINK_URL });

  if (!attachTo) {
    const childEnv = { ...process.env, ...env };
    const childLog = (name: string) => (line: string) => say(`[${name}] ${line}`);
    children.push(startChild("api", "src/bin/api.ts", childEnv, childLog("api")));
    children.push(startChild("worker", "src/bin/worker.ts", childEnv, childLog("worker")));
    for (const child of children) say(`started ${child.name} (pid ${child.process.pid})`);
  }
  try {
    await waitForReady(`${apiUrl}/readyz`, attachTo ? 120_000 : 30_000, children);
  } catch (error) {
    // The children name REDIS_URL, DATABASE_URL or PORT: say which of the demo's settings those are.
    if (error instanceof ChildExited)
      throw new Error(`${error.message} (the demo gives its API and worker DEMO_DATABASE_URL, DEMO_REDIS_URL and DEMO_PORT as DATABASE_URL, REDIS_URL and PORT)`, {
        cause: error,
      });
    throw error;
  }

  // The token carries the issuer and audience the API checks when they are set (the API child
  // inherits them, and in compose the API shares the demo's environment).
  const jwt = loadJwtConfig({ ...process.env, ...env });
  // Renewed before the API would refuse it: past its ttl, or past JWT_MAX_TOKEN_AGE when set.
  const minted = mintedTokens(
    () =>
      mintToken(
        env.JWT_SECRET,
        {
          sub: DEMO_CALLER,
          scope: "wallets:read wallets:write transactions:read alerts:read alerts:write ingest:write risk:write",
          email: DEMO_EMAIL,
          phone: DEMO_PHONE,
          ttlSeconds: TOKEN_TTL_SECONDS,
        },
        jwt,
      ),
    renewEveryMs(TOKEN_TTL_SECONDS * 1000, jwt.maxTokenAgeMs),
  );
  const tokens = minted.current;
  const token = await tokens();
  const api = createApiClient(apiUrl, tokens);
  if (!attachTo) await ensureOwnApi(api);
  // A fresh set of demo wallets each start; chain data from earlier starts stays (it is history).
  const removed = await removeEarlierRun(sql, api, DEMO_CALLER);
  if (removed > 0) say(`deleted the ${removed} wallets an earlier start seeded (tagged ${DEMO_TAG}), with their alerts`);
  const cast = createCast();
  const walletIds = await seed(api, cast, sink);

  printBanner(token, walletIds.size);
  stops.push(watchDeliveries(sql, DEMO_CALLER, say));

  let slot = 300_000_000 + Math.floor(Date.now() / 400);
  for (const batch of scriptedBatches(cast, Math.floor(Date.now() / 1000), slot)) {
    const result = await api<{ accepted: number }>("POST", "/v1/ingest/transactions", { transactions: batch });
    say(`feed: posted ${batch.length} transaction(s) (${result.accepted} new) — ${describe(batch[0]!.type, batch.length)}`);
    slot += batch.length;
    await sleep(1500);
  }
  stops.push(startBackgroundFeed(api, cast, say));
  say("the scripted alerts are in flight; a background feed keeps posting traffic. Ctrl-C stops everything.");
}

async function seed(api: ApiCall, cast: DemoCast, webhookSink: WebhookSink): Promise<Map<string, string>> {
  const walletIds = new Map<string, string>();
  for (const wallet of cast.wallets) {
    const created = await api<{ walletId: string }>("POST", "/v1/wallets", { address: wallet.address, alias: wallet.alias, tags: wallet.tags });
    walletIds.set(wallet.key, created.walletId);
  }
  await api("POST", "/v1/ingest/accounts", { accounts: accountSnapshots(cast) });
  await api("PUT", "/v1/risk/labels", { labels: demoLabels(cast) });
  for (const alert of DEMO_ALERTS) {
    for (const channel of DEMO_CHANNELS) {
      const created = await api<{ alertId: string; webhookSecret?: string }>("POST", "/v1/risk/alerts", {
        walletId: walletIds.get(alert.wallet),
        condition: alert.condition,
        ...(alert.threshold !== undefined ? { threshold: alert.threshold } : {}),
        ...(alert.token ? { token: alert.token } : {}),
        notificationMethod: channel,
        ...(channel === "webhook" ? { webhookUrl: webhookSink.url } : {}),
        cooldownSeconds: 60,
      });
      if (created.webhookSecret) webhookSink.trust(created.alertId, created.webhookSecret);
    }
  }
  say(`seeded ${cast.wallets.length} wallets, ${DEMO_ALERTS.length * DEMO_CHANNELS.length} alerts (each condition on webhook, email and SMS), 3 counterparty labels`);
  return walletIds;
}

function printBanner(token: string, wallets: number): void {
  const smtpUrl = process.env.SMTP_URL ? redactUrl(process.env.SMTP_URL) : undefined;
  const facts = { publicUrl, caller: DEMO_CALLER, wallets, adminUser: env.ADMIN_USER, adminPassword, sinkUrl: sink?.url, smtpUrl };
  console.log(bannerLines({ ...facts, twilio: Boolean(process.env.TWILIO_ACCOUNT_SID), token }).join("\n"));
}

const describe = (type: string, count: number) =>
  count > 1 ? `a burst of ${count} ${type}s from the market maker` : type === "transfer" ? "a transfer" : type;

async function ensurePortFree(): Promise<void> {
  const failure = await listenProbe(listenHost, settings.port);
  if (!failure) return;
  if (failure.code === "EADDRINUSE") {
    // A port that was free when asked, not merely the next number: that one was often taken too.
    const free = await freePortAfter(settings.port);
    throw new Error(
      `port ${settings.port} is in use: another program listens there (an earlier demo, docker compose's API, a development server). ` +
        (free === undefined
          ? "Stop it, or give the demo a free port with DEMO_PORT"
          : `Stop it, or give the demo another port with DEMO_PORT, e.g. DEMO_PORT=${free} npm run demo (free when checked)`),
    );
  }
  throw new Error(`cannot listen on port ${settings.port} (DEMO_PORT) at ${listenHost}: ${failure.message}`);
}

/** The first of the next few ports that the API could listen on now, or undefined. */
async function freePortAfter(port: number): Promise<number | undefined> {
  for (let candidate = port + 1; candidate <= Math.min(port + 20, 65535); candidate += 1) {
    if (!(await listenProbe(listenHost, candidate))) return candidate;
  }
  return undefined;
}

/**
 * The server that answered /readyz is the one the demo started: it takes the token the demo minted
 * with this run's secret. Asked before anything is seeded, with a request that writes nothing.
 */
async function ensureOwnApi(api: ApiCall): Promise<void> {
  const exited = children.find((child) => child.process.exitCode !== null || child.process.signalCode !== null);
  if (exited) throw new Error(`the ${exited.name} exited before the demo could begin${lastWords(exited)}`);
  await api("GET", "/v1/wallets").catch((error: unknown) => {
    throw new Error(`the server on port ${settings.port} is not the API the demo started (${(error as Error).message}); set DEMO_PORT to a free port`, {
      cause: error,
    });
  });
}

async function ensureDatabase(url: string): Promise<void> {
  const name = new URL(url).pathname.slice(1);
  const adminUrl = new URL(url);
  adminUrl.pathname = "/postgres";
  const admin = postgres(adminUrl.toString(), { max: 1, onnotice: () => {} });
  try {
    const [row] = await admin`select 1 as found from pg_database where datname = ${name}`;
    if (!row) await admin.unsafe(`create database "${name.replaceAll('"', '""')}"`);
  } finally {
    await admin.end();
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function shutdown(code: number): Promise<never> {
  if (stopping) {
    say(children.length > 0 ? "stopping at once: API and worker killed" : "stopping at once");
    for (const child of children) killChild(child);
    process.exit(1);
  }
  stopping = true;
  // Nothing started yet (a port in use, a database refused): nothing to stop, and nothing to say.
  if (children.length > 0 || sink) say("stopping: feed, API and worker, which finish what they are doing (Ctrl-C again to exit at once)");
  for (const stop of stops.reverse()) stop();
  // Each child gets longer than the worker's wait for its active jobs before it is killed.
  await Promise.all(children.map((child) => stopChild(child)));
  await sink?.close();
  process.exit(code);
}

process.on("SIGINT", () => void shutdown(0));
process.on("SIGTERM", () => void shutdown(0));
main().catch((error: unknown) => {
  console.error(`demo failed: ${(error as Error).message}`);
  void shutdown(1);
});
