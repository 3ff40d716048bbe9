// The notice to the owner of a disabled alert is owed in Postgres (alerts.disabled_notice_owed),
// not only as a BullMQ job: when Redis loses the job (a flush, or an enqueue that failed after
// the disabling committed), the reconciler queues it again, and the owner is told once. Real
// API, real SMTP peer, real webhook receiver, real workers and reconciler.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recordPermanentFailure, type DisabledNotice } from "../../src/notify/alert-health.ts";
import { runReconcileOnce } from "../../src/pipeline/reconcile.ts";
import { enqueueDisabledNotice } from "../../src/queue/disabled-notices.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { alertRow, startDeliveryWorkers, type DeliveryWorkers } from "../helpers/delivery.ts";
import { deletePrefixKeys } from "../helpers/redis-keys.ts";
import { bearer, trackWallet } from "../helpers/seed.ts";
import { parseMessage, startSmtpPeer, type SmtpPeer } from "../helpers/smtp-peer.ts";
import { waitFor } from "../helpers/wait.ts";
import { startWebhookReceiver, type WebhookReceiver } from "../helpers/webhook-receiver.ts";

let t: TestApp;
let smtp: SmtpPeer;
let receiver: WebhookReceiver;
let workers: DeliveryWorkers | undefined;
let n = 0;

const SCOPES = "wallets:write alerts:write alerts:read";

beforeAll(async () => {
  smtp = await startSmtpPeer();
  receiver = await startWebhookReceiver();
  t = await startTestApp("disabled-notice-owed", { SMTP_URL: smtp.url, RETRY_SCHEDULE: "100ms,200ms" });
});
afterAll(async () => {
  await workers?.close();
  await receiver?.close();
  await smtp?.close();
  await t?.close();
});

/**
 * The workers start when a test needs them: until then a queued notice waits in Redis. The SMTP
 * peer shares this process, and no test here waits out a timeout: generous ones, so that a
 * stalled answer is not taken for a failure and the notice sent twice.
 */
function ensureWorkers(): void {
  workers ??= startDeliveryWorkers(t, { smtpTimeoutMs: 5_000, webhookTimeoutMs: 5_000 });
}

const unique = (name: string) => `${name}-${++n}@fund.example`;
const noticesTo = (address: string) =>
  smtp.messages.filter((mail) => mail.to.includes(address) && parseMessage(mail.raw).subject.startsWith("[Risk alert disabled]"));
/** A sweep that finds the disabling past its grace period. */
const sweep = () => runReconcileOnce({ ...t.deps, now: () => new Date(Date.now() + 1_000) }, { graceMs: 0 });

/** A webhook alert made through the API with a token that carries `email` (none when undefined). */
async function webhookAlert(email: string | undefined): Promise<{ alertId: string; token: string }> {
  const token = await t.token("alice", SCOPES, email === undefined ? {} : { email });
  const wallet = await trackWallet(t, token, { alias: "Treasury" });
  const url = receiver.route(`/gone-${++n}`).respond({ status: 410 }).url;
  const res = await t.app.inject({
    method: "POST",
    url: "/v1/risk/alerts",
    headers: bearer(token),
    payload: { walletId: wallet.walletId, condition: "large_transfer", threshold: 10_000, notificationMethod: "webhook", webhookUrl: url },
  });
  expect(res.statusCode, res.body).toBe(201);
  return { alertId: res.json().alertId, token };
}

/** Disables the alert as a 410 Gone does, queuing its notice with `enqueueNotice`. */
async function disable(alertId: string, enqueueNotice: (notice: DisabledNotice) => Promise<void>): Promise<void> {
  const disabled = await recordPermanentFailure(
    { sql: t.deps.sql, logger: t.deps.logger, enqueueNotice },
    { alertId, gone: true, error: "410 Gone", now: new Date() },
  );
  expect(disabled).toBe(true);
}

const redisAway = () => Promise.reject(new Error("connect ECONNREFUSED 127.0.0.1:6379"));
const owed = async (alertId: string) => (await alertRow(t, alertId)).disabledNoticeOwed;

// Several waits in a row on the workers, each up to waitFor's 20 s.
describe("a disabled alert's notice that Redis lost", { timeout: 60_000 }, () => {
  it("is queued again by the reconciler when its enqueue failed after the disabling, and reaches the owner once", async () => {
    const owner = unique("owner");
    const { alertId } = await webhookAlert(owner);

    await disable(alertId, redisAway);
    expect(await owed(alertId)).toBe(true);

    ensureWorkers();
    expect((await sweep()).disabledNotices).toBe(1);
    const notice = await waitFor(`the notice to ${owner}`, async () => noticesTo(owner)[0]);
    expect(parseMessage(notice.raw).text).toContain(alertId);
    await waitFor("the notice to be settled", async () => !(await owed(alertId)));
    expect((await sweep()).disabledNotices).toBe(0);
    expect(noticesTo(owner)).toHaveLength(1);
  });

  it("is queued again after the queue's keys were flushed before its job ran", async () => {
    await workers?.close();
    workers = undefined;
    const owner = unique("owner");
    const { alertId } = await webhookAlert(owner);
    await disable(alertId, (notice) => enqueueDisabledNotice(t.deps.queues, t.config.retryScheduleMs, notice));
    // A queued job is live: the sweep leaves it alone.
    expect((await sweep()).disabledNotices).toBe(0);

    await deletePrefixKeys(t.deps.redis, t.config.queuePrefix);
    expect((await sweep()).disabledNotices).toBe(1);
    ensureWorkers();

    await waitFor(`the notice to ${owner}`, async () => noticesTo(owner)[0]);
    await waitFor("the notice to be settled", async () => !(await owed(alertId)));
    expect(noticesTo(owner)).toHaveLength(1);
  });
});

describe("a sweep racing a notice job that finishes", () => {
  it("does not queue afresh a notice whose job settled it and completed between the sweep's reads", async () => {
    ensureWorkers();
    const owner = unique("owner");
    const { alertId } = await webhookAlert(owner);
    await disable(alertId, (notice) => enqueueDisabledNotice(t.deps.queues, t.config.retryScheduleMs, notice));
    await waitFor("the notice to be settled", async () => !(await owed(alertId)));
    // The sweep's first read saw it owed (the job had not settled it yet)…
    await t.deps.sql`update alerts set disabled_notice_owed = true where id = ${alertId}`;
    // …and the job settled it and completed before the sweep read the job states.
    const settleMeanwhile = () => t.deps.sql`update alerts set disabled_notice_owed = false where id = ${alertId}`;
    const redis = new Proxy(t.deps.redis, {
      get(target, property, receiver) {
        if (property !== "pipeline") return Reflect.get(target, property, receiver);
        // Only the pipeline that reads this notice's job state: the sweep reads other kinds' first.
        return () => {
          const pipeline = target.pipeline();
          const exists = pipeline.exists.bind(pipeline);
          let readsTheNotice = false;
          pipeline.exists = ((key: string) => {
            readsTheNotice ||= key.includes(`notice_${alertId}_`);
            return exists(key);
          }) as typeof pipeline.exists;
          const exec = pipeline.exec.bind(pipeline);
          pipeline.exec = async () => {
            const answers = await exec();
            if (readsTheNotice) await settleMeanwhile();
            return answers;
          };
          return pipeline;
        };
      },
    });

    const swept = await runReconcileOnce({ ...t.deps, redis, now: () => new Date(Date.now() + 1_000) }, { graceMs: 0 });

    expect(swept.disabledNotices).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(noticesTo(owner)).toHaveLength(1);
  });
});

describe("settling a disabled alert's notice", { timeout: 60_000 }, () => {
  it("settles it once sent, once its address is refused, and when no address is known, so that no sweep queues it again", async () => {
    ensureWorkers();
    const sent = unique("sent");
    const refused = unique("refused");
    smtp.rejectRecipient(refused, 550);
    const alerts = [await webhookAlert(sent), await webhookAlert(refused), await webhookAlert(undefined)];

    for (const { alertId } of alerts) await disable(alertId, redisAway);
    expect((await sweep()).disabledNotices).toBe(3);

    for (const { alertId } of alerts) await waitFor(`the notice of ${alertId} to be settled`, async () => !(await owed(alertId)));
    expect((await sweep()).disabledNotices).toBe(0);
    expect(noticesTo(sent)).toHaveLength(1);
    expect(noticesTo(refused)).toHaveLength(0);
  });

  it("no longer owes it once the owner has set the alert's status, and sends none", async () => {
    ensureWorkers();
    const owner = unique("owner");
    const { alertId, token } = await webhookAlert(owner);
    await disable(alertId, redisAway);

    const res = await t.app.inject({ method: "PATCH", url: `/v1/risk/alerts/${alertId}`, headers: bearer(token), payload: { status: "paused" } });
    expect(res.statusCode, res.body).toBe(200);

    expect(await owed(alertId)).toBe(false);
    expect((await sweep()).disabledNotices).toBe(0);
    expect(noticesTo(owner)).toHaveLength(0);
  });
});
