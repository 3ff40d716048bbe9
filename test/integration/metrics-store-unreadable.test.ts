// A store that cannot be read at scrape time leaves its gauges out of the scrape (README,
// Monitoring), so that `absent(...)` rules fire. The evaluation lag, the one gauge without
// labels, went out as 0 instead ("nothing behind") whenever PostgreSQL refused or stalled:
// prom-client's reset() gives a label-less gauge a sample at 0.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createTestDatabase } from "../helpers/db.ts";
import { startLoggedApp, type LoggedApp } from "../helpers/logged-app.ts";
import { endpointOf, startTcpProxy, throughProxy, type TcpProxy } from "../helpers/tcp-proxy.ts";

// The app reaches PostgreSQL through a proxy that the tests cut, stall and restore; Redis directly.
let database: Awaited<ReturnType<typeof createTestDatabase>>;
let pgProxy: TcpProxy;
let logged: LoggedApp;
const ADMIN_AUTH = `Basic ${Buffer.from("ops:correct-horse-battery").toString("base64")}`;

beforeAll(async () => {
  database = await createTestDatabase("metrics-store-unreadable");
  pgProxy = await startTcpProxy(endpointOf(database.url, 5432));
  logged = await startLoggedApp(
    "metrics-store-unreadable",
    {
      DATABASE_URL: throughProxy(database.url, pgProxy),
      DATABASE_POOL_SIZE: "2",
      ADMIN_USER: "ops",
      ADMIN_PASSWORD: "correct-horse-battery",
    },
    "info",
  );
  await logged.app.ready();
});
afterAll(async () => {
  await logged?.close();
  await pgProxy?.close();
  await database?.drop();
});

const scrape = async () => {
  const res = await logged.app.inject({ url: "/metrics", headers: { authorization: ADMIN_AUTH } });
  expect(res.statusCode).toBe(200);
  return res.body;
};
/** The sample lines of a metric family (not its # HELP and # TYPE lines). */
const samples = (body: string, name: string) => body.split("\n").filter((line) => line === name || line.startsWith(`${name} `) || line.startsWith(`${name}{`));
const LAG = "wallet_alerts_evaluation_lag_seconds";
const NOTIFICATIONS = "wallet_alerts_notifications";
const QUEUE_JOBS = "wallet_alerts_queue_jobs";
// Label-less too: 0 receivers would read "no receiver failing", and 0 "autovacuum runs".
const RECEIVERS = "wallet_alerts_webhook_receivers_retrying";
const AUTOVACUUM_OFF = "wallet_alerts_postgres_autovacuum_off";

describe("the PostgreSQL gauges of a scrape that cannot read PostgreSQL", () => {
  it("leaves the lag out, not 0, while PostgreSQL refuses connections; Redis's gauges stay", async () => {
    const before = await scrape();
    expect(samples(before, LAG)).toEqual([`${LAG} 0`]);
    expect(samples(before, NOTIFICATIONS).length).toBeGreaterThan(0);
    expect(samples(before, RECEIVERS)).toEqual([`${RECEIVERS} 0`]);
    expect(samples(before, AUTOVACUUM_OFF)).toHaveLength(1);
    const from = logged.lines.length;
    await pgProxy.cut();
    try {
      const body = await scrape();
      expect(samples(body, LAG)).toEqual([]);
      expect(samples(body, NOTIFICATIONS)).toEqual([]);
      expect(samples(body, RECEIVERS)).toEqual([]);
      expect(samples(body, AUTOVACUUM_OFF)).toEqual([]);
      expect(samples(body, QUEUE_JOBS).length).toBeGreaterThan(0);
      // The family is still described: only its sample is missing.
      expect(body).toContain(`# TYPE ${LAG} gauge`);
      expect(logged.lines.slice(from).some((line) => line.includes("metrics: PostgreSQL (evaluation lag) could not be read"))).toBe(true);
    } finally {
      await pgProxy.restore();
    }
    await vi.waitFor(async () => expect(samples(await scrape(), LAG)).toEqual([`${LAG} 0`]), { timeout: 20_000, interval: 100 });
  });

  it("leaves the lag out, not 0, while PostgreSQL accepts and does not answer (past the scrape's 2 s bound)", async () => {
    // An answer is owed: a stored batch nobody evaluated, so a lag that read 0 would be a lie.
    await logged.deps.sql`insert into ingest_batches (id, transaction_count, created_at) values ('bat_stall', 1, now() - interval '90 seconds')`;
    const lag = Number(samples(await scrape(), LAG)[0]?.split(" ")[1]);
    expect(lag).toBeGreaterThanOrEqual(90);
    pgProxy.stall();
    try {
      const body = await scrape();
      expect(samples(body, LAG)).toEqual([]);
      expect(samples(body, NOTIFICATIONS)).toEqual([]);
      expect(samples(body, RECEIVERS)).toEqual([]);
      expect(samples(body, AUTOVACUUM_OFF)).toEqual([]);
      expect(samples(body, QUEUE_JOBS).length).toBeGreaterThan(0);
    } finally {
      // The stalled connections lost their answers: drop them, then let new ones in.
      await pgProxy.cut();
      await pgProxy.restore();
    }
    await vi.waitFor(async () => expect(Number(samples(await scrape(), LAG)[0]?.split(" ")[1])).toBeGreaterThanOrEqual(90), {
      timeout: 20_000,
      interval: 100,
    });
  });
});
