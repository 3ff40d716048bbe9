import { Queue, UnrecoverableError, Worker } from "bullmq";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createJobMetrics, startMetricsServer, WORKER_METRICS_OPTIONS } from "../../src/metrics/index.ts";
import { ALL_QUEUES, DELIVERY_QUEUE, QUEUES, type QueueName } from "../../src/queue/names.ts";
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

describe("Bull Board retries", () => {
  /** Fails a job of each named queue under the app's prefix, as a worker whose processor refuses it. */
  async function failJobs(jobs: ReadonlyArray<{ queue: QueueName; jobId: string; data: object }>): Promise<void> {
    const connection = createWorkerRedis(TEST_REDIS_URL);
    const workers: Worker[] = [];
    try {
      const failed = jobs.map(({ queue, jobId, data }) => {
        const worker: Worker = new Worker(
          queue,
          async (): Promise<void> => {
            throw new UnrecoverableError("refused");
          },
          { connection, prefix: t.config.queuePrefix },
        );
        workers.push(worker);
        const done = new Promise<void>((resolve) => worker.on("failed", (job) => job?.id === jobId && resolve()));
        return t.deps.queues[queue].add("job", data, { jobId }).then(() => done);
      });
      await Promise.all(failed);
    } finally {
      await Promise.all(workers.map((worker) => worker.close()));
      connection.disconnect();
    }
  }

  it("offers and allows no retry of a delivery job (it cannot resend), which stays failed, while a risk job's retry runs it again", async () => {
    const delivery = t.deps.queues[QUEUES.deliverWebhook];
    const risk = t.deps.queues[QUEUES.risk];
    await failJobs([
      { queue: QUEUES.deliverWebhook, jobId: "ntf_retried", data: { notificationId: "ntf_retried" } },
      { queue: QUEUES.risk, jobId: "risk_retried", data: { scoreChangeIds: [1] } },
    ]);
    const put = (url: string) => t.app.inject({ method: "PUT", url, headers: { authorization: RIGHT } });

    // The board shows no Retry buttons on the delivery queues...
    const listed = (await t.app.inject({ url: "/admin/queues/api/queues", headers: { authorization: RIGHT } })).json<{
      queues: { name: string; allowRetries: boolean }[];
    }>().queues;
    const deliveryQueues: readonly string[] = Object.values(DELIVERY_QUEUE);
    for (const queue of listed) expect(queue.allowRetries, queue.name).toBe(!deliveryQueues.includes(queue.name));

    // ...and its API refuses them, one job or all of a state, failed or completed.
    for (const url of [
      "/admin/queues/api/queues/deliver-webhook/ntf_retried/retry",
      "/admin/queues/api/queues/deliver-webhook/retry/failed",
      "/admin/queues/api/queues/deliver-webhook/retry/completed",
      "/admin/queues/api/queues/deliver-email/retry/failed",
      "/admin/queues/api/queues/deliver-sms/retry/failed",
    ]) {
      const res = await put(url);
      expect(res.statusCode, url).toBe(403);
      expect(res.headers["content-type"]).toContain("application/problem+json");
      expect(res.json<{ code: string; detail: string }>(), url).toMatchObject({
        code: "forbidden",
        detail: expect.stringMatching(/^jobs of deliver-(webhook|email|sms) are not retried: a delivery job cannot resend its notification/),
      });
    }
    expect(await delivery.getJobState("ntf_retried")).toBe("failed");
    expect((await delivery.getJob("ntf_retried"))?.failedReason).toBe("refused");

    // Nor does it add a delivery job by hand ("Add job", "Duplicate"): one beside the
    // notification's own job could send it twice.
    const added = await t.app.inject({
      method: "POST",
      url: "/admin/queues/api/queues/deliver-webhook/add",
      headers: { authorization: RIGHT },
      payload: { name: "deliver", data: { notificationId: "ntf_retried" } },
    });
    expect(added.statusCode, added.body).toBe(403);
    expect(added.json<{ detail: string }>().detail).toMatch(/^jobs are not added to deliver-webhook by hand/);
    expect(await delivery.getJobCounts("waiting", "prioritized")).toEqual({ waiting: 0, prioritized: 0 });

    // A risk job's retry does its work again: it waits for a worker.
    const retried = await put("/admin/queues/api/queues/risk/risk_retried/retry");
    expect(retried.statusCode).toBe(204);
    expect(await risk.getJobState("risk_retried")).toBe("waiting");
    await risk.remove("risk_retried");
    await delivery.remove("ntf_retried");
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

  it("reports a queue paused from Bull Board as wallet_alerts_queue_paused 1 until it is resumed", async () => {
    const scrape = async () => (await t.app.inject({ url: "/metrics", headers: { authorization: RIGHT } })).body;
    const board = (action: "pause" | "resume") =>
      t.app.inject({ method: "PUT", url: `/admin/queues/api/queues/deliver-webhook/${action}`, headers: { authorization: RIGHT } });
    try {
      expect((await board("pause")).statusCode).toBeLessThan(300);
      const paused = await scrape();
      expect(paused).toContain("# TYPE wallet_alerts_queue_paused gauge");
      expect(paused).toMatch(/^wallet_alerts_queue_paused\{queue="deliver-webhook"\} 1$/m);
      for (const queue of ALL_QUEUES.filter((name) => name !== "deliver-webhook")) {
        expect(paused).toMatch(new RegExp(`^wallet_alerts_queue_paused\\{queue="${queue}"\\} 0$`, "m"));
      }
    } finally {
      expect((await board("resume")).statusCode).toBeLessThan(300);
    }
    const resumed = await scrape();
    expect(resumed).toMatch(/^wallet_alerts_queue_paused\{queue="deliver-webhook"\} 0$/m);
    expect(resumed).not.toMatch(/^wallet_alerts_queue_paused\{[^}]*\} 1$/m);
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
    // The oldest pending one is 90 s old; an older retrying one (its receiver down) does not count.
    await sql`update notifications set created_at = now() - interval '90 seconds' where id = 'ntf_m1'`;
    await sql`update notifications set created_at = now() - interval '1 hour' where id = 'ntf_m3'`;

    const body = (await t.app.inject({ url: "/metrics", headers: { authorization: RIGHT } })).body;
    expect(body).toMatch(/^wallet_alerts_notifications\{channel="webhook",status="pending"\} 2$/m);
    expect(body).toMatch(/^wallet_alerts_notifications\{channel="webhook",status="retrying"\} 1$/m);
    expect(body).toMatch(/^wallet_alerts_notifications\{channel="sms",status="pending"\} 0$/m);
    const oldest = Number(/^wallet_alerts_notification_oldest_pending_seconds\{channel="webhook"\} (\S+)$/m.exec(body)?.[1]);
    expect(oldest).toBeGreaterThanOrEqual(90);
    expect(oldest).toBeLessThan(3_600);
    expect(body).toMatch(/^wallet_alerts_notification_oldest_pending_seconds\{channel="email"\} 0$/m);
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
