import { Queue, Worker } from "bullmq";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createJobMetrics, startMetricsServer, WORKER_METRICS_OPTIONS } from "../../src/metrics/index.ts";
import { ALL_QUEUES } from "../../src/queue/names.ts";
import { createWorkerRedis } from "../../src/redis.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { uniqueQueuePrefix } from "../helpers/db.ts";
import { TEST_REDIS_URL } from "../helpers/env.ts";

const ADMIN = { user: "ops", password: "correct-horse-battery" };
const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`;
const RIGHT = basic(ADMIN.user, ADMIN.password);

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp("admin", { ADMIN_USER: ADMIN.user, ADMIN_PASSWORD: ADMIN.password });
});
afterAll(async () => {
  await t.close();
});

describe("admin authentication (Bull Board and /metrics)", () => {
  for (const url of ["/admin/queues", "/admin/queues/api/queues", "/metrics"]) {
    it(`answers ${url} without credentials with 401 and a Basic challenge`, async () => {
      const res = await t.app.inject({ url });
      expect(res.statusCode).toBe(401);
      expect(res.headers["www-authenticate"]).toMatch(/^Basic realm=/);
      expect(res.headers["content-type"]).toContain("application/problem+json");
      expect(res.json()).toMatchObject({ code: "unauthorized" });
    });

    it(`answers ${url} with a wrong password or a wrong user with 401`, async () => {
      for (const authorization of [
        basic(ADMIN.user, "wrong-password"),
        basic("someone", ADMIN.password),
        basic(ADMIN.user, `${ADMIN.password}x`),
        `Bearer ${await t.token("alice")}`,
        "Basic not-base64!",
      ]) {
        const res = await t.app.inject({ url, headers: { authorization } });
        expect(res.statusCode, authorization).toBe(401);
      }
    });
  }

  it("serves the Bull Board page and its static assets with the right credentials", async () => {
    const res = await t.app.inject({ url: "/admin/queues", headers: { authorization: RIGHT } });
    expect(res.statusCode).toBe(200);
    expect(res.headers["content-type"]).toContain("text/html");
    expect(res.body).toContain('<base href="/admin/queues/"');
    const script = /src="(static\/js\/main\.[^"]+\.js)"/.exec(res.body)?.[1];
    expect(script).toBeDefined();
    const asset = await t.app.inject({ url: `/admin/queues/${script}`, headers: { authorization: RIGHT } });
    expect(asset.statusCode).toBe(200);
    expect(asset.headers["content-type"]).toContain("javascript");
    expect((await t.app.inject({ url: `/admin/queues/${script}` })).statusCode).toBe(401);
  });

  it("lists every queue in the Bull Board API", async () => {
    const res = await t.app.inject({ url: "/admin/queues/api/queues", headers: { authorization: RIGHT } });
    expect(res.statusCode).toBe(200);
    const names = (res.json() as { queues: { name: string }[] }).queues.map((q) => q.name);
    expect(names.sort()).toEqual([...ALL_QUEUES].sort());
  });

  it("does not rate-limit or demand a bearer token on the admin paths", async () => {
    const res = await t.app.inject({ url: "/metrics", headers: { authorization: RIGHT } });
    expect(res.statusCode).toBe(200);
    expect(res.headers["ratelimit-limit"]).toBeUndefined();
  });
});

describe("/metrics exposition", () => {
  it("reports queue depth per queue and state, read from Redis at scrape time", async () => {
    await t.deps.queues.risk.add("evaluate", { scoreChangeIds: [1] });
    await t.deps.queues.risk.add("evaluate", { scoreChangeIds: [2] }, { delay: 3_600_000 });
    const body = (await t.app.inject({ url: "/metrics", headers: { authorization: RIGHT } })).body;
    expect(body).toContain("# TYPE wallet_alerts_queue_jobs gauge");
    expect(body).toMatch(/^wallet_alerts_queue_jobs\{queue="risk",state="waiting"\} 1$/m);
    expect(body).toMatch(/^wallet_alerts_queue_jobs\{queue="risk",state="delayed"\} 1$/m);
    for (const queue of ALL_QUEUES) expect(body).toContain(`wallet_alerts_queue_jobs{queue="${queue}",state="failed"}`);
  });

  it("reports open notifications by channel and status, and the evaluation lag, from PostgreSQL", async () => {
    const { sql } = t.deps;
    await sql`insert into tracked_wallets (id, owner, address) values ('wal_m1', 'alice', 'addr-m1')`;
    await sql`insert into alerts (id, owner, wallet_id, condition, threshold, notification_method, webhook_url)
              values ('alr_m1', 'alice', 'wal_m1', 'large_transfer', 10, 'webhook', 'https://example.com/hook')`;
    await sql`insert into notifications (id, alert_id, channel, destination, payload, status) values
              ('ntf_m1', 'alr_m1', 'webhook', 'https://example.com/hook', '{}', 'pending'),
              ('ntf_m2', 'alr_m1', 'webhook', 'https://example.com/hook', '{}', 'pending'),
              ('ntf_m3', 'alr_m1', 'webhook', 'https://example.com/hook', '{}', 'retrying'),
              ('ntf_m4', 'alr_m1', 'webhook', 'https://example.com/hook', '{}', 'delivered'),
              ('ntf_m5', 'alr_m1', 'webhook', 'https://example.com/hook', '{}', 'failed')`;
    await sql`insert into ingest_batches (id, transaction_count, created_at)
              values ('bat_m1', 3, now() - interval '120 seconds')`;

    const body = (await t.app.inject({ url: "/metrics", headers: { authorization: RIGHT } })).body;
    expect(body).toMatch(/^wallet_alerts_notifications\{channel="webhook",status="pending"\} 2$/m);
    expect(body).toMatch(/^wallet_alerts_notifications\{channel="webhook",status="retrying"\} 1$/m);
    expect(body).toMatch(/^wallet_alerts_notifications\{channel="sms",status="pending"\} 0$/m);
    // Finished notifications are the workers' counters (delivery_attempts_total), not a count of the table.
    expect(body).not.toMatch(/^wallet_alerts_notifications\{[^}]*status="(delivered|failed)"/m);
    const lag = Number(/^wallet_alerts_evaluation_lag_seconds (\S+)$/m.exec(body)?.[1]);
    expect(lag).toBeGreaterThanOrEqual(120);

    await sql`update ingest_batches set evaluated_at = now() where id = 'bat_m1'`;
    const after = (await t.app.inject({ url: "/metrics", headers: { authorization: RIGHT } })).body;
    expect(after).toMatch(/^wallet_alerts_evaluation_lag_seconds 0$/m);
  });

  it("records HTTP request durations by method, route template and status", async () => {
    const token = await t.token("alice");
    await t.app.inject({ url: "/v1/wallets/wal_missing", headers: { authorization: `Bearer ${token}` } });
    await t.app.inject({ url: "/healthz" });
    const body = (await t.app.inject({ url: "/metrics", headers: { authorization: RIGHT } })).body;
    expect(body).toContain("# TYPE wallet_alerts_http_request_duration_seconds histogram");
    expect(body).toMatch(/wallet_alerts_http_request_duration_seconds_count\{method="GET",route="\/healthz",status_code="200"\} 1/);
    // The template, not the raw URL: one series however many wallet ids are asked for.
    expect(body).toMatch(/route="\/v1\/wallets\/:walletId",status_code="404"\} 1/);
    expect(body).not.toContain("wal_missing");
    expect(body).toContain("process_cpu_seconds_total");
  });
});

describe("admin surfaces switched off", () => {
  it("answers /admin/queues and /metrics with 404 when ADMIN_USER is not set", async () => {
    const off = await startTestApp("admin-off");
    try {
      for (const url of ["/admin/queues", "/metrics"]) {
        const res = await off.app.inject({ url, headers: { authorization: RIGHT } });
        expect(res.statusCode, url).toBe(404);
        expect(res.json()).toMatchObject({ code: "not_found" });
      }
    } finally {
      await off.close();
    }
  });
});

describe("worker job metrics", () => {
  it("observes completed and failed jobs and serves them on the worker's /metrics behind the admin credentials", async () => {
    const prefix = uniqueQueuePrefix("admin-worker");
    const producer = createWorkerRedis(TEST_REDIS_URL);
    const consumer = createWorkerRedis(TEST_REDIS_URL);
    const queue = new Queue("deliver-email", { connection: producer, prefix });
    const registry = new Registry();
    const jobMetrics = createJobMetrics(registry);
    const server = await startMetricsServer(registry, 0, ADMIN, "127.0.0.1");
    const worker = new Worker(
      "deliver-email",
      async (job) => {
        if (job.data.fail) throw new Error("refused");
        return "sent";
      },
      { connection: consumer, prefix, ...WORKER_METRICS_OPTIONS },
    );
    jobMetrics.watch(worker);
    let settled = 0;
    const done = new Promise<void>((resolve) => {
      const count = () => {
        settled += 1;
        if (settled === 3) resolve();
      };
      worker.on("completed", count);
      worker.on("failed", count);
    });
    try {
      await queue.addBulk([
        { name: "deliver", data: { fail: false } },
        { name: "deliver", data: { fail: false } },
        { name: "deliver", data: { fail: true } },
      ]);
      await done;
      const url = `http://127.0.0.1:${server.port}/metrics`;
      expect((await fetch(url)).status).toBe(401);
      expect((await fetch(url, { headers: { authorization: basic(ADMIN.user, "nope-nope") } })).status).toBe(401);
      const res = await fetch(url, { headers: { authorization: RIGHT } });
      expect(res.status).toBe(200);
      const body = await res.text();
      expect(body).toMatch(/^wallet_alerts_job_duration_seconds_count\{queue="deliver-email",outcome="completed"\} 2$/m);
      expect(body).toMatch(/^wallet_alerts_job_duration_seconds_count\{queue="deliver-email",outcome="failed"\} 1$/m);
      expect((await fetch(`http://127.0.0.1:${server.port}/other`, { headers: { authorization: RIGHT } })).status).toBe(404);
      // BullMQ's own per-minute metrics, which Bull Board charts, are on thanks to WORKER_METRICS_OPTIONS.
      expect((await queue.getMetrics("completed")).meta.count).toBe(2);
    } finally {
      await worker.close();
      await server.close();
      await queue.obliterate({ force: true });
      await queue.close();
      producer.disconnect();
      consumer.disconnect();
    }
  });
});
