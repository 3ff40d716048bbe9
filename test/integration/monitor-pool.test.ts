// The process's own health and monitoring reads (/readyz, /metrics' PostgreSQL gauges) have a
// pool of their own. They shared the request pool: under an ingest flood every connection was
// held by ingest waiting on row locks, /readyz answered 503 (every replica at once, for a load
// balancer to take them all out) and the evaluation lag went absent from every scrape, while
// PostgreSQL answered normally. A PostgreSQL that cannot be reached still makes /readyz 503
// (readiness.test.ts).
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { holdTransaction } from "../helpers/held-transaction.ts";

let t: TestApp;
/** The test's own session, outside the app's pools. */
let observer: postgres.Sql;
const ADMIN_AUTH = `Basic ${Buffer.from("ops:correct-horse-battery").toString("base64")}`;
/** The request pool's size in startTestApp. */
const REQUEST_POOL = 4;

beforeAll(async () => {
  t = await startTestApp("monitor-pool", { ADMIN_USER: "ops", ADMIN_PASSWORD: "correct-horse-battery" });
  observer = postgres(t.config.databaseUrl, { max: 1, onnotice: () => {} });
});
afterAll(async () => {
  await observer?.end();
  await t?.close();
});

/** Holds every connection of the request pool in an open transaction until the returned function ends them. */
async function holdRequestPool(): Promise<() => Promise<void>> {
  const releases = await Promise.all(Array.from({ length: REQUEST_POOL }, () => holdTransaction(t.deps.sql, (tx) => tx`select 1`)));
  return async () => {
    await Promise.all(releases.map((release) => release()));
  };
}

/** The request pool's sessions idle in their open transactions. */
async function heldRequestSessions(): Promise<number> {
  const [row] = await observer<{ n: number }[]>`
    select count(*)::int as n from pg_stat_activity
    where datname = current_database() and application_name = 'wallet-alerts' and state = 'idle in transaction'`;
  return row!.n;
}

describe("the monitor pool", () => {
  it("answers /readyz 200 while every request-pool connection is held", async () => {
    const release = await holdRequestPool();
    try {
      expect(await heldRequestSessions()).toBe(REQUEST_POOL);
      const res = await t.app.inject({ url: "/readyz" });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ status: "ready", postgres: "up", redis: "up" });
    } finally {
      await release();
    }
  });

  it("serves the evaluation lag and the other PostgreSQL gauges in /metrics while every request-pool connection is held", async () => {
    const release = await holdRequestPool();
    try {
      expect(await heldRequestSessions()).toBe(REQUEST_POOL);
      const res = await t.app.inject({ url: "/metrics", headers: { authorization: ADMIN_AUTH } });
      expect(res.statusCode).toBe(200);
      expect(res.body).toMatch(/^wallet_alerts_evaluation_lag_seconds 0$/m);
      expect(res.body).toMatch(/^wallet_alerts_notifications\{channel="webhook",status="pending"\} 0$/m);
      expect(res.body).toMatch(/^wallet_alerts_webhook_receivers_retrying 0$/m);
      expect(res.body).toMatch(/^wallet_alerts_postgres_autovacuum_off [01]$/m);
    } finally {
      await release();
    }
  });

  it("opens its sessions under an application_name of its own, apart from the request pool's", async () => {
    const [row] = await t.deps.monitorSql<{ name: string }[]>`select current_setting('application_name') as name`;
    expect(row!.name).toBe("wallet-alerts-monitor");
  });
});
