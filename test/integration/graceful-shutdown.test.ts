// Operators stop processes with SIGTERM (deploys, scaling down). With the API and the worker
// as real processes under load: both exit 0 after draining; after a restart every ingested
// transaction is evaluated and every owed webhook delivered, each under one webhook-id.
import { spawn, type ChildProcess } from "node:child_process";
import { createServer, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Transaction } from "../../src/domain/types.ts";
import { startTestApp, testEnv, type TestApp } from "../helpers/app.ts";
import { randomAddress } from "../helpers/chain.ts";
import { exited, spawnWorker, tx, waitFor } from "../helpers/pipeline.ts";
import { freePort } from "../helpers/ports.ts";
import { startWebhookReceiver, type WebhookReceiver } from "../helpers/webhook-receiver.ts";

let t: TestApp;
let receiver: WebhookReceiver;
let token: string;

beforeAll(async () => {
  t = await startTestApp("graceful-shutdown");
  receiver = await startWebhookReceiver();
  token = await t.token("alice");
});
afterAll(async () => {
  await receiver.close();
  await t.close();
});

function spawnApi(port: number): ChildProcess {
  return spawn(process.execPath, ["--import", "tsx", "src/bin/api.ts"], {
    env: {
      ...process.env,
      ...testEnv({ DATABASE_URL: t.config.databaseUrl, QUEUE_PREFIX: t.config.queuePrefix, PORT: String(port), HOST: "127.0.0.1", LOG_LEVEL: "warn" }),
      RATE_LIMIT_PER_MINUTE: "1000000",
    },
    stdio: ["ignore", "inherit", "inherit"],
  });
}

async function call(base: string, method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body ? { "content-type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
}

const count = async (query: string) => Number((await t.deps.sql.unsafe(query))[0]!.n);

describe("graceful shutdown under load", () => {
  it("drains on SIGTERM, exits 0, and after a restart leaves nothing unevaluated or undelivered", async () => {
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    let api = spawnApi(port);
    let worker = spawnWorker(t);
    await waitFor("the API to be ready", async () => (await fetch(`${base}/readyz`).catch(() => null))?.ok);

    const address = randomAddress();
    const route = receiver.route("/hooks/shutdown");
    const wallet = (await (await call(base, "POST", "/v1/wallets", { address })).json()) as { walletId: string };
    const alert = (await (
      await call(base, "POST", "/v1/risk/alerts", {
        walletId: wallet.walletId,
        condition: "large_transfer",
        threshold: 100,
        notificationMethod: "webhook",
        webhookUrl: route.url,
      })
    ).json()) as { webhookSecret: string };
    route.verifyWith(alert.webhookSecret);

    // Load: batches of large transfers posted back to back; SIGTERM both processes mid-way.
    let accepted = 0;
    let refusedAfterStop = false;
    let batches = 0;
    const load = (async () => {
      for (let b = 0; b < 400 && !refusedAfterStop; b++) {
        const txs: Transaction[] = Array.from({ length: 20 }, (_, i) =>
          tx({ from: address, to: randomAddress(), amount: 500, blockTime: 1_760_000_000 + b * 20 + i }),
        );
        try {
          const response = await call(base, "POST", "/v1/ingest/transactions", { transactions: txs });
          if (response.status === 202) accepted += ((await response.json()) as { accepted: number }).accepted;
          batches++;
        } catch {
          refusedAfterStop = true; // the API has closed its port
        }
      }
    })();
    await waitFor("some load to be under way", async () => batches >= 10);
    api.kill("SIGTERM");
    worker.kill("SIGTERM");
    const [apiExit, workerExit] = await Promise.all([exited(api), exited(worker)]);
    await load;
    expect(apiExit.code).toBe(0);
    expect(workerExit.code).toBe(0);
    expect(accepted).toBeGreaterThan(0);

    // Restart both; the work left in Postgres and Redis is finished.
    api = spawnApi(port);
    worker = spawnWorker(t);
    await waitFor("the restarted API to be ready", async () => (await fetch(`${base}/readyz`).catch(() => null))?.ok);
    await waitFor(
      "every batch evaluated and every webhook delivered",
      async () =>
        (await count("select count(*) as n from ingest_batches where evaluated_at is null")) === 0 &&
        (await count("select count(*) as n from notifications where status <> 'delivered'")) === 0 &&
        (await count("select count(*) as n from notifications")) === accepted,
      60_000,
    );
    const stored = await count(`select count(*) as n from transactions where from_address = '${address}'`);
    expect(stored).toBe(accepted);
    expect(await count("select count(*) as n from alert_events")).toBe(accepted);
    const ids = new Set(route.requests.map((request) => String(request.headers["webhook-id"])));
    expect(ids.size).toBe(accepted);
    expect(route.requests.every((request) => request.verifiedWith.length === 1)).toBe(true);

    api.kill("SIGTERM");
    worker.kill("SIGTERM");
    expect((await exited(api)).code).toBe(0);
    expect((await exited(worker)).code).toBe(0);
  }, 120_000);

  it("exits 0 on a SIGTERM that comes while the API waits for Redis at start", async () => {
    // A Redis that takes connections and never answers: the API's start waits on it.
    const sockets: Socket[] = [];
    let connected!: () => void;
    const firstConnection = new Promise<void>((resolve) => (connected = resolve));
    const silentRedis = createServer((socket) => {
      sockets.push(socket);
      connected();
    });
    await new Promise<void>((resolve) => silentRedis.listen(0, "127.0.0.1", resolve));
    const { port: redisPort } = silentRedis.address() as { port: number };
    try {
      const api = spawn(process.execPath, ["--import", "tsx", "src/bin/api.ts"], {
        env: {
          ...process.env,
          ...testEnv({
            DATABASE_URL: t.config.databaseUrl,
            REDIS_URL: `redis://127.0.0.1:${redisPort}`,
            QUEUE_PREFIX: t.config.queuePrefix,
            PORT: String(await freePort()),
            HOST: "127.0.0.1",
            LOG_LEVEL: "warn",
          }),
        },
        stdio: ["ignore", "inherit", "inherit"],
      });
      await firstConnection;
      api.kill("SIGTERM");
      expect(await exited(api)).toEqual({ code: 0, signal: null });
    } finally {
      for (const socket of sockets) socket.destroy();
      silentRedis.close();
    }
  }, 30_000);
});
