// npm run bench:api — the HTTP API under load (DESIGN.md section 9), not a test.
//   GET /v1/wallets req/s beside a static Fastify page of the same body served by a separate
//   process in the same run (target ≥ 0.6 of it), and GET /v1/transactions p50/p99 at 10
//   connections over 1,000,000 stored transactions (target p99 ≤ 10 ms), both as fast as the API
//   answers (a saturated API: the p99 is mostly queueing behind the other connections) and
//   paced evenly at PACED_RATE requests a second (the latency of a request, not of the queue:
//   see lib/paced-load.ts for why that is not autocannon's own rate option).
// The API runs as its own process (src/bin/api.ts), exactly as in production.
import { fork, spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createRequire } from "node:module";
import autocannon from "autocannon";
import postgres from "postgres";
import { base58Encode } from "../src/domain/base58.ts";
import { runMigrations } from "../src/db/migrate.ts";
import { mintToken } from "../src/http/mint-token.ts";
import { freePort } from "../test/helpers/ports.ts";
import { deletePrefixKeysAt } from "../test/helpers/redis-keys.ts";
import { pacedLoad } from "./lib/paced-load.ts";
import { writeReport, type Row } from "./lib/report.ts";
import { freshScratchDatabase, scratchDatabaseExists, scratchDatabaseUrl } from "./lib/scratch-db.ts";

const DB_NAME = "wallet_alerts_bench_api";
const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const TRANSACTIONS = Number(process.env.BENCH_TRANSACTIONS ?? 1_000_000);
const WALLETS = 1_000;
const DURATION_S = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = 10;
/** Well under the saturated rate that the same run measures, so a request rarely waits for another. */
const PACED_RATE = Number(process.env.BENCH_PACED_RATE ?? 200);
const JWT_SECRET = randomBytes(32).toString("base64url");
const TSX_CLI = createRequire(import.meta.url).resolve("tsx/cli");
/** A prefix of this run's own: its queue keys are deleted when it ends (the database is kept for the next run). */
const PREFIX = `{wa-bench-api-${randomBytes(3).toString("hex")}}`;

const databaseUrl = scratchDatabaseUrl(DB_NAME);

/** Whether an earlier run left the database seeded with as many transactions (migrated to now). */
async function seededBefore(): Promise<boolean> {
  if (!(await scratchDatabaseExists(DB_NAME))) return false;
  await runMigrations(databaseUrl);
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  try {
    const [{ count }] = await sql<[{ count: string }]>`select count(*) from transactions`;
    return Number(count) === TRANSACTIONS;
  } finally {
    await sql.end();
  }
}

/** Seeds a fresh database, unless an earlier run's can be reused: 1,000,000 rows take a while to write. */
async function seed(): Promise<{ walletIds: string[] }> {
  const reuse = await seededBefore();
  if (!reuse) await freshScratchDatabase(DB_NAME);
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  try {
    if (!reuse) {
      console.error(`seeding ${WALLETS} wallets and ${TRANSACTIONS.toLocaleString()} transactions…`);
      const addresses = Array.from({ length: WALLETS }, () => base58Encode(randomBytes(32)));
      const ids = addresses.map((_, i) => `wal_bench${String(i).padStart(17, "0")}`);
      await sql`
        insert into tracked_wallets (id, owner, address, alias, tags)
        select id, 'bench', address, 'wallet ' || ord, '{bench}'
        from unnest(${ids}::text[], ${addresses}::text[]) with ordinality as t(id, address, ord)`;
      await sql`
        insert into address_state (address, balance, token_account_count, nft_count, risk_score, risk_factors)
        select address, (ord * 13 % 5000)::numeric + 0.5, ord % 7, ord % 3, (ord * 7 % 101)::smallint,
               case when ord % 5 = 0 then '{high_velocity}'::text[] else '{}'::text[] end
        from unnest(${addresses}::text[]) with ordinality as t(address, ord)`;
      await sql`insert into ingest_batches (id, transaction_count, evaluated_at) values ('bat_bench', ${TRANSACTIONS}, now())`;
      await sql`
        insert into transactions (signature, type, amount, token, from_address, to_address, block_time, slot, fee, status, batch_id)
        select md5(i::text) || md5((i * 31)::text), (array['transfer','swap','stake','nft','other'])[1 + i % 5],
               (i % 100000)::numeric / 100, 'SOL',
               (${addresses}::text[])[1 + i % ${WALLETS}],
               -- never the sender itself: a self-transfer is rare on the chain
               (${addresses}::text[])[1 + (i % ${WALLETS} + 1 + (i::bigint * 7919) % ${WALLETS - 1}) % ${WALLETS}],
               1700000000 + i * 3, 250000000 + i * 7, 0.000005,
               case when i % 40 = 0 then 'failed' else 'success' end, 'bat_bench'
        from generate_series(1, ${TRANSACTIONS}::int) as i`;
      // What ingest keeps per address: the history totals and the newest activity.
      await sql`
        insert into address_activity (address, last_activity, transaction_count)
        select address, max(block_time), count(*) from (
          select from_address as address, block_time from transactions
          union all select to_address, block_time from transactions where to_address <> from_address) t
        group by address`;
      // Index-only scans (filtered history counts) need the visibility map that VACUUM builds.
      await sql`vacuum analyze`;
    }
    const rows = await sql<{ id: string }[]>`select id from tracked_wallets where owner = 'bench' order by id`;
    return { walletIds: rows.map((r) => r.id) };
  } finally {
    await sql.end();
  }
}

async function startApi(): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const child = spawn(process.execPath, [TSX_CLI, "src/bin/api.ts"], {
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      REDIS_URL,
      JWT_SECRET,
      PORT: String(port),
      HOST: "127.0.0.1",
      LOG_LEVEL: "warn",
      RATE_LIMIT_PER_MINUTE: "10000000",
      QUEUE_PREFIX: PREFIX,
    },
    stdio: ["ignore", "inherit", "inherit"],
  });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 120; i++) {
    const ok = await fetch(`${url}/readyz`).then((r) => r.ok, () => false);
    if (ok) return { url, child };
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error("the API did not become ready");
}

async function startStatic(body: string): Promise<{ url: string; child: ChildProcess }> {
  const child = fork(new URL("./static-server.ts", import.meta.url), {
    execArgv: ["--import", "tsx"],
    env: { ...process.env, STATIC_BODY: body },
  });
  const port = await new Promise<number>((resolve) => child.once("message", (m: { port: number }) => resolve(m.port)));
  return { url: `http://127.0.0.1:${port}`, child };
}

function load(options: autocannon.Options): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    autocannon({ connections: CONNECTIONS, duration: DURATION_S, ...options }, (error, result) =>
      error ? reject(error) : resolve(result),
    );
  });
}

async function main(): Promise<void> {
  const { walletIds } = await seed();
  const token = await mintToken(JWT_SECRET, { sub: "bench", scope: "wallets:read transactions:read", ttlSeconds: 3600 });
  const headers = { authorization: `Bearer ${token}` };
  const api = await startApi();
  const page = await fetch(`${api.url}/v1/wallets`, { headers }).then((r) => r.text());
  const staticServer = await startStatic(page);
  try {
    // Warm both up (JIT, connection pools), then measure each alone for the same time.
    await load({ url: `${staticServer.url}/v1/wallets`, duration: 2 });
    await load({ url: `${api.url}/v1/wallets`, headers, duration: 2 });
    const staticRun = await load({ url: `${staticServer.url}/v1/wallets` });
    const walletsRun = await load({ url: `${api.url}/v1/wallets`, headers });
    const historyPath = () => `/v1/transactions?walletId=${walletIds[Math.floor(Math.random() * walletIds.length)]}&limit=50`;
    const historyPages: autocannon.Options = {
      url: api.url,
      headers,
      requests: [{ method: "GET", setupRequest: (request) => ({ ...request, path: historyPath() }) }],
    };
    const transactionsRun = await load(historyPages);
    const pacedRun = await pacedLoad({ origin: api.url, path: historyPath, headers, ratePerSecond: PACED_RATE, seconds: DURATION_S });
    const errors = [walletsRun, transactionsRun].reduce((sum, run) => sum + run.non2xx + run.errors, 0) + pacedRun.errors;
    const ratio = walletsRun.requests.average / staticRun.requests.average;
    const rows: Row[] = [
      { measure: "static Fastify page (same body)", value: staticRun.requests.average, unit: "req/s" },
      { measure: "GET /v1/wallets", value: walletsRun.requests.average, unit: "req/s", target: "≥ 0.6× static", ratio },
      { measure: "GET /v1/transactions p50", value: transactionsRun.latency.p50, unit: "ms" },
      { measure: "GET /v1/transactions p99", value: transactionsRun.latency.p99, unit: "ms", target: "≤ 10 ms", ratio: transactionsRun.latency.p99 / 10 },
      { measure: "GET /v1/transactions", value: transactionsRun.requests.average, unit: "req/s" },
      { measure: `GET /v1/transactions p50, paced at ${PACED_RATE}/s`, value: pacedRun.latencyMs.p50, unit: "ms" },
      { measure: `GET /v1/transactions p99, paced at ${PACED_RATE}/s`, value: pacedRun.latencyMs.p99, unit: "ms", target: "≤ 10 ms", ratio: pacedRun.latencyMs.p99 / 10 },
    ];
    await writeReport(
      "api",
      {
        setup: { transactions: TRANSACTIONS, wallets: WALLETS, connections: CONNECTIONS, seconds: DURATION_S, pageBytes: page.length, pacedRate: PACED_RATE },
        figures: {
          staticRps: staticRun.requests.average,
          walletsRps: walletsRun.requests.average,
          walletsP99Ms: walletsRun.latency.p99,
          transactionsP50Ms: transactionsRun.latency.p50,
          transactionsP99Ms: transactionsRun.latency.p99,
          transactionsRps: transactionsRun.requests.average,
          transactionsPacedP50Ms: pacedRun.latencyMs.p50,
          transactionsPacedP99Ms: pacedRun.latencyMs.p99,
          transactionsPacedRps: pacedRun.achievedPerSecond,
          errors,
        },
        ratios: {
          walletsToStatic: ratio,
          transactionsP99ToCeiling: transactionsRun.latency.p99 / 10,
          transactionsPacedP99ToCeiling: pacedRun.latencyMs.p99 / 10,
        },
        targets: { walletsToStatic: 0.6, transactionsP99Ms: 10 },
      },
      rows,
    );
  } finally {
    const apiExited = new Promise((resolve) => api.child.once("exit", resolve));
    api.child.kill("SIGTERM");
    staticServer.child.kill("SIGTERM");
    await apiExited;
    await deletePrefixKeysAt(REDIS_URL, PREFIX);
  }
}

await main();
