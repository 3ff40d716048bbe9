// The worker counts each notification it gives up by whose that is
// (wallet_alerts_deliveries_given_up_total{channel,cause}), so that the operator is paged for a
// give-up of ours (a provider refusing our sender, our SMTP server busy until the schedule ran
// out) and not for a customer's receiver (README, Monitoring). Real deliveries: a webhook
// receiver and an SMTP server on loopback, SMS to the log, under budgets of one SMS and one email
// an hour per caller; and one give-up whose record PostgreSQL could not take at once, counted by
// the job's next run.
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDb, type Sql } from "../../src/db/client.ts";
import { createDeliveryMetrics, createJobMetrics } from "../../src/metrics/index.ts";
import { GIVE_UP_CAUSES } from "../../src/notify/give-up-cause.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { clockClearOfBoundary, HOUR_MS } from "../helpers/clock.ts";
import { attemptsOf, isFinished, seedAlert, seedNotification, startDeliveryWorkers, waitForNotification, type DeliveryWorkers } from "../helpers/delivery.ts";
import { holdTransaction } from "../helpers/held-transaction.ts";
import { startSmtpPeer, type SmtpPeer } from "../helpers/smtp-peer.ts";
import { waitFor } from "../helpers/wait.ts";
import { startWebhookReceiver, type WebhookReceiver } from "../helpers/webhook-receiver.ts";

const SENDER = "alerts@wallet-alerts.test";
const CHANNELS = ["webhook", "email", "sms"] as const;
type Channel = (typeof CHANNELS)[number];

let t: TestApp;
let receiver: WebhookReceiver;
let smtp: SmtpPeer;
let workers: DeliveryWorkers | undefined;
let registry: Registry;

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  smtp = await startSmtpPeer();
  // Three attempts, each slot shorter than a provider's step: an outage of the provider gives up
  // after three attempts too (retry-steps.ts). One SMS and one email an hour per caller.
  t = await startTestApp("given-up-causes", {
    SMTP_URL: smtp.url,
    EMAIL_FROM: SENDER,
    RETRY_SCHEDULE: "100ms,100ms",
    SMS_PER_CALLER_PER_HOUR: "1",
    EMAIL_PER_CALLER_PER_HOUR: "1",
  });
});
afterAll(async () => {
  await workers?.close();
  await smtp?.close();
  await receiver?.close();
  await t?.close();
});

/**
 * Delivery workers counting on a registry of their own. `now`: their clock (the app's unless
 * given); `recordRetryMs`: see the last test.
 */
async function startCountingWorkers(options: { recordRetryMs?: number; now?: () => Date } = {}) {
  await stopWorkers();
  registry = new Registry();
  const { now, ...processorOptions } = options;
  workers = startDeliveryWorkers(
    { ...t, deps: { ...t.deps, now: now ?? t.deps.now } },
    { smtpTimeoutMs: 5_000 },
    { ...processorOptions, deliveryMetrics: createDeliveryMetrics(registry, createJobMetrics(registry)) },
  );
}
async function stopWorkers() {
  await workers?.close();
  workers = undefined;
}

const sample = async (series: string) => {
  const found = new RegExp(`^${series.replace(/[{}]/g, "\\$&")} (\\d+)$`, "m").exec(await registry.metrics());
  if (!found) throw new Error(`no sample of ${series}`);
  return Number(found[1]);
};
const givenUp = (channel: Channel, cause: string) => sample(`wallet_alerts_deliveries_given_up_total{channel="${channel}",cause="${cause}"}`);
const failedAttempts = (channel: Channel) => sample(`wallet_alerts_delivery_attempts_total{channel="${channel}",outcome="failed"}`);

/** Every channel's give-ups by cause, only the non-zero ones. */
async function givenUpCounts(): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const channel of CHANNELS) {
    for (const cause of GIVE_UP_CAUSES) {
      const count = await givenUp(channel, cause);
      if (count > 0) counts[`${channel} ${cause}`] = count;
    }
  }
  return counts;
}

/** Each failed attempt is one give-up, of one cause. */
async function expectEveryFailedAttemptOneGiveUp() {
  for (const channel of CHANNELS) {
    let sum = 0;
    for (const cause of GIVE_UP_CAUSES) sum += await givenUp(channel, cause);
    expect(sum, channel).toBe(await failedAttempts(channel));
  }
}

/** Waits for the notification to fail (the counters tick just after: the tests wait for them too). */
async function failed(id: string) {
  expect((await waitForNotification(t, id, isFinished)).status).toBe("failed");
}

let path = 0;
async function webhookNotification(...responses: { status: number }[]) {
  const route = receiver.route(`/given-up-${++path}`).respond(...responses);
  const alert = await seedAlert(t, { method: "webhook", webhookUrl: route.url });
  route.verifyWith(alert.secret!);
  return seedNotification(t, alert, "webhook", route.url);
}
/** Each recipient's emails have an owner of their own (unless told), each within its one email an hour. */
async function emailNotification(to: string, owner = `owner-of-${to}`) {
  const alert = await seedAlert(t, { method: "email", recipient: to, owner });
  return seedNotification(t, alert, "email", to);
}

describe("notifications given up, by cause", () => {
  afterAll(stopWorkers);

  it("start at zero for every channel and cause", async () => {
    await startCountingWorkers();
    for (const channel of CHANNELS) for (const cause of GIVE_UP_CAUSES) expect(await givenUp(channel, cause)).toBe(0);
  });

  it("count a receiver's 404, a receiver failing until the schedule ran out and a mailbox refused at RCPT TO as the destination's", async () => {
    const refusedHook = await webhookNotification({ status: 404 });
    const failingHook = await webhookNotification({ status: 503 }, { status: 503 }, { status: 503 });
    smtp.rejectRecipient("nobody@example.com", 550, "5.1.1 User unknown");
    const refusedMail = await emailNotification("nobody@example.com");
    for (const id of [refusedHook, failingHook, refusedMail]) await failed(id);
    expect((await attemptsOf(t, failingHook)).map((attempt) => attempt.statusCode)).toEqual([503, 503, 503]);

    await waitFor("three give-ups counted", async () => (await failedAttempts("webhook")) + (await failedAttempts("email")) === 3);
    expect(await givenUpCounts()).toEqual({ "webhook destination": 2, "email destination": 1 });
    await expectEveryFailedAttemptOneGiveUp();
  });

  it("count our SMTP server refusing our sender until the schedule ran out as the deployment's, and its 421 until then as the provider's", async () => {
    const before = await givenUpCounts();
    smtp.refuseSender(SENDER, 553, "5.7.1 Sender address rejected: not owned by user");
    try {
      await failed(await emailNotification("desk@example.com"));
    } finally {
      smtp.acceptSender(SENDER);
    }
    // More refusals than attempts: nodemailer may ask again on a fresh connection within one attempt.
    for (let refusal = 0; refusal < 10; refusal++) smtp.rejectRecipient("ops@example.com", 421, "4.3.2 Service shutting down");
    const busy = await emailNotification("ops@example.com");
    await failed(busy);
    expect((await attemptsOf(t, busy)).map((attempt) => attempt.statusCode)).toEqual([421, 421, 421]);

    await waitFor("both give-ups counted", async () => (await failedAttempts("email")) === before["email destination"]! + 2);
    expect(await givenUpCounts()).toEqual({ ...before, "email deployment": 1, "email provider": 1 });
    await expectEveryFailedAttemptOneGiveUp();
  });

  it("count an SMS over its owner's SMS_PER_CALLER_PER_HOUR as sms_budget", async () => {
    // On a clock clear of an hour's end, so that a caller's second SMS is over the budget. Only
    // here: BullMQ's delays are real time, and a clock ahead of it slows every retry above.
    const before = await givenUpCounts();
    await startCountingWorkers({ now: clockClearOfBoundary(HOUR_MS) });
    const alert = await seedAlert(t, { method: "sms", recipient: "+14155550321", owner: "budget-owner" });
    const ids = [await seedNotification(t, alert, "sms", "+14155550321"), await seedNotification(t, alert, "sms", "+14155550321")];
    const rows = await Promise.all(ids.map((id) => waitForNotification(t, id, isFinished)));
    expect(rows.map((row) => row.status).sort()).toEqual(["delivered", "failed"]);

    await waitFor("the held-back SMS counted", async () => (await failedAttempts("sms")) === 1);
    expect(before).toEqual({ "webhook destination": 2, "email destination": 1, "email deployment": 1, "email provider": 1 });
    expect(await givenUpCounts()).toEqual({ "sms sms_budget": 1 });
    await expectEveryFailedAttemptOneGiveUp();
  });

  it("count an email over its owner's EMAIL_PER_CALLER_PER_HOUR as email_budget", async () => {
    // On a clock clear of an hour's end, as for the SMS above.
    await startCountingWorkers({ now: clockClearOfBoundary(HOUR_MS) });
    const owner = "email-budget-owner";
    const ids = [await emailNotification("desk-1@example.com", owner), await emailNotification("desk-2@example.com", owner)];
    const rows = await Promise.all(ids.map((id) => waitForNotification(t, id, isFinished)));
    expect(rows.map((row) => row.status).sort()).toEqual(["delivered", "failed"]);

    await waitFor("the held-back email counted", async () => (await failedAttempts("email")) === 1);
    expect(await givenUpCounts()).toEqual({ "email email_budget": 1 });
    await expectEveryFailedAttemptOneGiveUp();
  });

  it("count a give-up whose record the job's next run wrote, with the cause its attempt had", async () => {
    // No retry inside the run: the record's first failure fails the job, and BullMQ runs it again.
    await startCountingWorkers({ recordRetryMs: 0 });
    const admin: Sql = createDb(t.config.databaseUrl, { max: 2 }).sql;
    try {
      const release = await holdTransaction(admin, (tx) => tx`lock table delivery_attempts in access exclusive mode`);
      let id: string;
      try {
        id = await webhookNotification({ status: 404 });
        const first = await lockWaiter(admin, "the attempt's record to wait on the held lock");
        await admin`select pg_terminate_backend(${first})`;
        await waitFor("the job's next run to wait on the held lock", async () => {
          const next = await lockWaiters(admin);
          return next.some((pid) => pid !== first);
        });
      } finally {
        await release();
      }
      await failed(id);
      await waitFor("the give-up counted", async () => (await failedAttempts("webhook")) === 1);
      // Recorded by the next run, which sent nothing.
      expect(receiver.all.filter((request) => request.headers["webhook-id"] === id)).toHaveLength(1);
      expect(await givenUpCounts()).toEqual({ "webhook destination": 1 });
      await expectEveryFailedAttemptOneGiveUp();
    } finally {
      await admin.end();
    }
  });
});

/** Backends of this database that wait on a lock. */
async function lockWaiters(admin: Sql): Promise<number[]> {
  const rows = await admin<{ pid: number }[]>`
    select pid from pg_stat_activity
    where datname = current_database() and wait_event_type = 'Lock' and pid <> pg_backend_pid()`;
  return rows.map((row) => row.pid);
}
async function lockWaiter(admin: Sql, what: string): Promise<number> {
  return waitFor(what, async () => (await lockWaiters(admin))[0]);
}
