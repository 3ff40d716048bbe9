// A webhook the receiver took (2xx) whose record PostgreSQL could not take at once (a restart, a
// killed backend, no connection left) is recorded later, not sent again (queue/jobs/record-sent.ts).
// Here the record waits on a lock held on delivery_attempts and its backend is terminated, as a
// restart or pg_terminate_backend ends it; the receiver checks every signature.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDb, type Sql } from "../../src/db/client.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { seedAlert, seedNotification, startDeliveryWorkers, type DeliveryWorkers } from "../helpers/delivery.ts";
import { holdTransaction } from "../helpers/held-transaction.ts";
import { waitFor } from "../helpers/wait.ts";
import { startWebhookReceiver, type WebhookReceiver } from "../helpers/webhook-receiver.ts";

let t: TestApp;
let receiver: WebhookReceiver;
/** The test's own connections: the lock holder and the terminations, apart from the workers' pool. */
let admin: Sql;
let path = 0;

beforeAll(async () => {
  t = await startTestApp("delivery-record-retry");
  receiver = await startWebhookReceiver();
  admin = createDb(t.config.databaseUrl, { max: 2 }).sql;
});
afterAll(async () => {
  await admin?.end();
  await receiver?.close();
  await t?.close();
});

/**
 * Waits for a backend of this database, not terminated before, to wait on a lock, and terminates
 * it (a terminated one may still be listed a moment).
 */
async function terminateNextLockWaiter(terminated: Set<number>, what: string): Promise<void> {
  const pid = await waitFor(what, async () => {
    const rows = await admin<{ pid: number }[]>`
      select pid from pg_stat_activity
      where datname = current_database() and wait_event_type = 'Lock' and pid <> pg_backend_pid()`;
    return rows.map((row) => row.pid).find((candidate) => !terminated.has(candidate));
  });
  terminated.add(pid);
  await admin`select pg_terminate_backend(${pid})`;
}

/** Waits for a backend not terminated yet to wait on a lock. */
async function nextLockWaiter(terminated: Set<number>, what: string): Promise<void> {
  await waitFor(what, async () => {
    const rows = await admin<{ pid: number }[]>`
      select pid from pg_stat_activity
      where datname = current_database() and wait_event_type = 'Lock' and pid <> pg_backend_pid()`;
    return rows.some((row) => !terminated.has(row.pid));
  });
}

/**
 * The notification once finished, and its attempts' status codes, read on the test's own
 * connections: a pooled connection whose backend was terminated may fail its next query.
 */
async function finished(id: string) {
  const row = await waitFor(`notification ${id} to finish`, async () => {
    const [found] = await admin<{ status: string; attemptCount: number }[]>`
      select status, attempt_count as "attemptCount" from notifications where id = ${id} and status in ('delivered', 'failed')`;
    return found;
  });
  const attempts = await admin<{ statusCode: number | null }[]>`
    select status_code as "statusCode" from delivery_attempts where notification_id = ${id} order by at, id`;
  return { ...row, statusCodes: attempts.map((attempt) => attempt.statusCode) };
}

async function webhookAlert() {
  const route = receiver.route(`/record-retry-${++path}`);
  const alert = await seedAlert(t, { method: "webhook", webhookUrl: route.url });
  route.verifyWith(alert.secret!);
  return { route, alert };
}

describe("the record of a webhook the receiver took", () => {
  let workers: DeliveryWorkers | undefined;
  afterAll(async () => {
    await workers?.close();
  });

  it("is written again, not the webhook sent again, when its write fails twice on a terminated backend", async () => {
    workers = startDeliveryWorkers(t);
    const { route, alert } = await webhookAlert();
    const release = await holdTransaction(admin, (tx) => tx`lock table delivery_attempts in access exclusive mode`);
    let id: string;
    try {
      id = await seedNotification(t, alert, "webhook", route.url);
      const terminated = new Set<number>();
      await terminateNextLockWaiter(terminated, "the attempt's record to wait on the held lock");
      await terminateNextLockWaiter(terminated, "the record's retry to wait on the held lock");
      await nextLockWaiter(terminated, "the record's second retry to wait on the held lock");
    } finally {
      await release();
    }

    expect(await finished(id)).toEqual({ status: "delivered", attemptCount: 1, statusCodes: [200] });
    expect(route.requests).toHaveLength(1);
    expect(route.requests[0]!.verifiedWith).toEqual([alert.secret]);
    expect(route.requests[0]!.headers["webhook-id"]).toBe(id);
    await workers.close();
    workers = undefined;
  });

  it("is written by the job's next run, which sends nothing, when the write failed through the run's retries", async () => {
    // No retry inside the run: its first failure fails the job, and BullMQ runs it again.
    workers = startDeliveryWorkers(t, {}, { recordRetryMs: 0 });
    const { route, alert } = await webhookAlert();
    const release = await holdTransaction(admin, (tx) => tx`lock table delivery_attempts in access exclusive mode`);
    let id: string;
    try {
      id = await seedNotification(t, alert, "webhook", route.url);
      const terminated = new Set<number>();
      await terminateNextLockWaiter(terminated, "the attempt's record to wait on the held lock");
      await nextLockWaiter(terminated, "the job's next run to wait on the held lock");
    } finally {
      await release();
    }

    expect(await finished(id)).toEqual({ status: "delivered", attemptCount: 1, statusCodes: [200] });
    expect(route.requests).toHaveLength(1);
    expect(route.requests[0]!.verifiedWith).toEqual([alert.secret]);
    await workers.close();
    workers = undefined;
  });
});
