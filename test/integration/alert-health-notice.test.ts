// The notice to the owner of a disabled alert (README "Alert health"): it goes to the email
// claim of the owner's token, stored on the alert when it is created (and by a PATCH), else to
// an email alert's recipient; it is a job on the email queue, retried on RETRY_SCHEDULE, and a
// refusal of the address ends it. Real API, real SMTP peer, real webhook receiver, real workers.
import type { Job } from "bullmq";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { makeDisabledNoticeProcessor } from "../../src/queue/jobs/disabled-notice.ts";
import { QUEUES, type DisabledNoticeJob } from "../../src/queue/names.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { failingFor } from "../helpers/failure-run.ts";
import {
  alertRow,
  isFinished,
  seedNotification,
  startDeliveryWorkers,
  waitForNotification,
  type DeliveryWorkers,
  type SeededAlert,
} from "../helpers/delivery.ts";
import { bearer, trackWallet } from "../helpers/seed.ts";
import { parseMessage, startSmtpPeer, type SmtpPeer } from "../helpers/smtp-peer.ts";
import { waitFor } from "../helpers/wait.ts";
import { startWebhookReceiver, type WebhookReceiver } from "../helpers/webhook-receiver.ts";

let t: TestApp;
let smtp: SmtpPeer;
let receiver: WebhookReceiver;
let workers: DeliveryWorkers;
let n = 0;

const SCOPES = "wallets:write alerts:write alerts:read";

beforeAll(async () => {
  smtp = await startSmtpPeer();
  receiver = await startWebhookReceiver();
  // Three tries in all, for the notifications and for the notices alike.
  t = await startTestApp("alert-health-notice", { SMTP_URL: smtp.url, RETRY_SCHEDULE: "100ms,200ms" });
  // The SMTP peer and the receiver share this process, and no test here waits out a timeout:
  // generous ones, so that a stalled answer is not taken for a failure and retried.
  workers = startDeliveryWorkers(t, { smtpTimeoutMs: 5_000, webhookTimeoutMs: 5_000 });
});
afterEach(() => {
  vi.restoreAllMocks();
});
afterAll(async () => {
  await workers?.close();
  await receiver?.close();
  await smtp?.close();
  await t?.close();
});

const unique = (name: string) => `${name}-${++n}@fund.example`;
const mailsTo = (address: string) => smtp.messages.filter((mail) => mail.to.includes(address));
const noticesTo = (address: string) => mailsTo(address).filter((mail) => parseMessage(mail.raw).subject.startsWith("[Risk alert disabled]"));

/** A tracked wallet and an alert on it, made through the API with `token`, as a client makes them. */
async function createAlert(
  token: string,
  body: { notificationMethod: "email" | "webhook"; recipient?: string; webhookUrl?: string },
  app: TestApp = t,
): Promise<SeededAlert> {
  const wallet = await trackWallet(app, token, { alias: "Treasury" });
  const res = await app.app.inject({
    method: "POST",
    url: "/v1/risk/alerts",
    headers: bearer(token),
    payload: { walletId: wallet.walletId, condition: "large_transfer", threshold: 10_000, ...body },
  });
  expect(res.statusCode, res.body).toBe(201);
  const created = res.json();
  return { alertId: created.alertId, walletId: wallet.walletId, address: wallet.address, owner: "alice", secret: created.webhookSecret ?? null };
}

/** A webhook alert whose receiver answers 410 Gone: its next notification disables it. */
async function goneWebhookAlert(token: string): Promise<{ alert: SeededAlert; url: string }> {
  const route = receiver.route(`/gone-${++n}`).respond({ status: 410 });
  return { alert: await createAlert(token, { notificationMethod: "webhook", webhookUrl: route.url }), url: route.url };
}

/** Puts the alert 25 h into a failure run whose latest failure was an hour ago, so that its next permanent failure disables it. */
async function failingForADay(alertId: string): Promise<void> {
  await failingFor(t, alertId);
}

/** Sends one notification of the alert and waits for it to fail and for the alert to be disabled. */
async function disableThroughFailure(alert: SeededAlert, channel: "email" | "webhook", destination: string, app: TestApp = t): Promise<void> {
  const id = await seedNotification(app, alert, channel, destination);
  expect((await waitForNotification(app, id, isFinished)).status).toBe("failed");
  await waitFor("the alert to be disabled", async () => (await alertRow(app, alert.alertId)).status === "disabled");
}

/** The alert's notice jobs in `states`, oldest first, each with its state. */
async function noticeJobs(app: TestApp, alertId: string, states: readonly ("delayed" | "completed" | "failed")[]): Promise<Array<{ job: Job; state: string }>> {
  const found: Array<{ job: Job; state: string }> = [];
  for (const state of states) {
    const jobs = await app.deps.queues[QUEUES.deliverEmail].getJobs([state]);
    for (const job of jobs) if (job.name === "disabled-notice" && job.data.alertId === alertId) found.push({ job, state });
  }
  return found.sort((a, b) => a.job.timestamp - b.job.timestamp);
}

/** The notice job of the alert, once BullMQ has finished with it (completed or failed). */
async function finishedNoticeJob(alertId: string): Promise<{ job: Job; state: string }> {
  return waitFor(
    `the notice job of ${alertId} to finish`,
    async () => {
      for (const state of ["completed", "failed"] as const) {
        const jobs = await t.deps.queues[QUEUES.deliverEmail].getJobs([state]);
        const job = jobs.find((candidate) => candidate.name === "disabled-notice" && candidate.data.alertId === alertId);
        if (job) return { job, state };
      }
      return undefined;
    },
  );
}

// Several waits in a row on workers and retries, each up to waitFor's 20 s.
describe("telling the owner of a disabled alert", { timeout: 60_000 }, () => {
  it("emails the owner's email claim when a webhook alert is disabled", async () => {
    const owner = unique("owner");
    const { alert, url } = await goneWebhookAlert(await t.token("alice", SCOPES, { email: owner }));

    await disableThroughFailure(alert, "webhook", url);

    const notice = await waitFor(`the notice to ${owner}`, async () => noticesTo(owner)[0]);
    const parsed = parseMessage(notice.raw);
    expect(parsed.subject).toBe("[Risk alert disabled] large_transfer on Treasury");
    expect(parsed.text).toContain(alert.alertId);
    expect(parsed.text).toContain("the webhook endpoint answered 410 Gone");
  });

  it("names the alert in its PATCH, the wallet's address, and the webhook that failed without its query string", async () => {
    const owner = unique("owner");
    const token = await t.token("alice", SCOPES, { email: owner });
    const route = receiver.route(`/gone-${++n}`).respond({ status: 410 });
    // The receiver's own token in the query string: the notice must not repeat it.
    const alert = await createAlert(token, { notificationMethod: "webhook", webhookUrl: `${route.url}?token=s3cret-receiver-key` });

    await disableThroughFailure(alert, "webhook", route.url);

    const parsed = parseMessage((await waitFor(`the notice to ${owner}`, async () => noticesTo(owner)[0])).raw);
    expect(parsed.text).toContain(`PATCH /v1/risk/alerts/${alert.alertId} with {"status": "active"}`);
    expect(parsed.text).not.toContain("{id}");
    expect(parsed.text).toContain(`on Treasury (${alert.address}) has been disabled`);
    expect(parsed.text).toContain(`Its notifications go by webhook to ${route.url}.`);
    expect(parsed.text).not.toContain("s3cret-receiver-key");
    expect(parsed.html).not.toContain("s3cret-receiver-key");
  });

  it("emails the owner's email claim, not the recipient whose refusals disabled an email alert", async () => {
    const gone = "gone@fund.example";
    for (let i = 0; i < 3; i++) smtp.rejectRecipient(gone, 550);
    const token = await t.token("alice", SCOPES, { email: "alice@fund.example" });
    const alert = await createAlert(token, { notificationMethod: "email", recipient: gone });
    await failingForADay(alert.alertId);

    await disableThroughFailure(alert, "email", gone);

    const notice = await waitFor("the notice to alice@fund.example", async () => noticesTo("alice@fund.example")[0]);
    expect(parseMessage(notice.raw).text).toMatch(/none delivered, with no more than 24 hours between one failure and the next/);
    expect((await finishedNoticeJob(alert.alertId)).state).toBe("completed");
    expect(mailsTo(gone)).toHaveLength(0);
  });

  it("retries a notice that meets a 451 and delivers it on the next attempt", async () => {
    const owner = unique("owner");
    smtp.rejectRecipient(owner, 451);
    const { alert, url } = await goneWebhookAlert(await t.token("alice", SCOPES, { email: owner }));

    await disableThroughFailure(alert, "webhook", url);

    await waitFor(`the notice to ${owner}`, async () => noticesTo(owner)[0]);
    const { job, state } = await finishedNoticeJob(alert.alertId);
    expect(state).toBe("completed");
    expect(job.attemptsMade).toBe(2);
    expect(noticesTo(owner)).toHaveLength(1);
  });

  it("sends the notice to the email claim of the latest PATCH that had a usable one", async () => {
    const first = unique("first");
    const latest = unique("latest");
    const { alert, url } = await goneWebhookAlert(await t.token("alice", SCOPES, { email: first }));
    const patch = async (email: string | undefined) => {
      const token = await t.token("alice", SCOPES, email === undefined ? {} : { email });
      const res = await t.app.inject({ method: "PATCH", url: `/v1/risk/alerts/${alert.alertId}`, headers: bearer(token), payload: { cooldownSeconds: 60 } });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).not.toHaveProperty("ownerEmail");
    };
    await patch(latest);
    // Neither a token without the claim nor one whose claim is no address replaces it.
    await patch(undefined);
    await patch("not an address");

    await disableThroughFailure(alert, "webhook", url);

    await waitFor(`the notice to ${latest}`, async () => noticesTo(latest)[0]);
    expect(noticesTo(first)).toHaveLength(0);
  });

  it("falls back, for an alert made without a usable email claim, to an email alert's recipient (retrying a 451 there too) and to a warning for a webhook alert", async () => {
    const warn = vi.spyOn(t.deps.logger, "warn");
    const to = unique("recipient");
    smtp.rejectRecipient(to, 554); // the alert's own message: refused, the notification fails
    smtp.rejectRecipient(to, 451); // the notice's first try
    const emailAlert = await createAlert(await t.token("alice", SCOPES), { notificationMethod: "email", recipient: to });
    // A claim that is no address is not stored: as if the token had none.
    const { alert: webhookAlert, url } = await goneWebhookAlert(await t.token("alice", SCOPES, { email: "alice@@fund.example" }));
    await failingForADay(emailAlert.alertId);

    await disableThroughFailure(emailAlert, "email", to);
    await disableThroughFailure(webhookAlert, "webhook", url);

    const notice = await waitFor(`the notice to ${to}`, async () => noticesTo(to)[0]);
    expect(parseMessage(notice.raw).text).toContain(emailAlert.alertId);
    expect(warn).toHaveBeenCalledWith(
      { alertId: webhookAlert.alertId, owner: "alice" },
      "alert disabled; no email address known for its owner",
    );
  });

  it("gives up on a notice at once when its address is refused (5xx), and after the schedule when it keeps meeting a 4xx, saying so at warn", async () => {
    const warn = vi.spyOn(t.deps.logger, "warn");
    const refused = unique("refused");
    const busy = unique("busy");
    smtp.rejectRecipient(refused, 550);
    for (let i = 0; i < 3; i++) smtp.rejectRecipient(busy, 451);
    const refusedAlert = await goneWebhookAlert(await t.token("alice", SCOPES, { email: refused }));
    const busyAlert = await goneWebhookAlert(await t.token("alice", SCOPES, { email: busy }));

    await disableThroughFailure(refusedAlert.alert, "webhook", refusedAlert.url);
    await disableThroughFailure(busyAlert.alert, "webhook", busyAlert.url);

    const once = await finishedNoticeJob(refusedAlert.alert.alertId);
    expect(once.state).toBe("failed");
    expect(once.job.attemptsMade).toBe(1);
    const thrice = await finishedNoticeJob(busyAlert.alert.alertId);
    expect(thrice.state).toBe("failed");
    expect(thrice.job.attemptsMade).toBe(3);
    for (const [alert, attempts, code] of [[refusedAlert.alert, 1, "550"], [busyAlert.alert, 3, "451"]] as const) {
      expect(warn).toHaveBeenCalledWith(
        { alertId: alert.alertId, owner: "alice", attempts, error: expect.stringMatching(new RegExp(`^${code}`)) },
        "gave up telling the owner of a disabled alert by email",
      );
    }
    expect(noticesTo(refused)).toHaveLength(0);
    expect(noticesTo(busy)).toHaveLength(0);
  });

  // The jobs here carry no disabledAt, as those queued before notices were dated: the status alone decides.
  it("drops a notice still waiting for its retry once the owner has re-enabled the alert or deleted it", async () => {
    const owner = unique("owner");
    const token = await t.token("alice", SCOPES, { email: owner });
    const runNotice = makeDisabledNoticeProcessor({ sql: t.deps.sql, logger: t.deps.logger, email: workers.channels.email });
    const noticeJob = (alertId: string) => ({ name: "disabled-notice", data: { alertId }, attemptsMade: 1, opts: { attempts: 3 } }) as Job<DisabledNoticeJob>;
    const disabled = await createAlert(token, { notificationMethod: "webhook", webhookUrl: "http://127.0.0.1:9/hook" });
    const reEnabled = await createAlert(token, { notificationMethod: "webhook", webhookUrl: "http://127.0.0.1:9/hook" });
    const deleted = await createAlert(token, { notificationMethod: "webhook", webhookUrl: "http://127.0.0.1:9/hook" });
    await t.deps.sql`update alerts set status = 'disabled', disabled_reason = 'the webhook endpoint answered 410 Gone'
                     where id in ${t.deps.sql([disabled.alertId, reEnabled.alertId, deleted.alertId])}`;
    const res = await t.app.inject({ method: "PATCH", url: `/v1/risk/alerts/${reEnabled.alertId}`, headers: bearer(token), payload: { status: "active" } });
    expect(res.statusCode, res.body).toBe(200);
    expect((await t.app.inject({ method: "DELETE", url: `/v1/risk/alerts/${deleted.alertId}`, headers: bearer(token) })).statusCode).toBe(204);

    await runNotice(noticeJob(reEnabled.alertId));
    await runNotice(noticeJob(deleted.alertId));
    expect(noticesTo(owner)).toHaveLength(0);
    await runNotice(noticeJob(disabled.alertId));
    expect(noticesTo(owner).map((mail) => parseMessage(mail.raw).text)).toEqual([expect.stringContaining(disabled.alertId)]);
  });
});

describe("a notice waiting for its retry when the alert is re-enabled and disabled again", { timeout: 60_000 }, () => {
  // A retry an hour away, which no stall reaches: the test re-enables the alert and disables it
  // again meanwhile, then promotes the retry (BullMQ runs it at once, as if it had come due).
  let slow: TestApp;
  let slowWorkers: DeliveryWorkers;

  beforeAll(async () => {
    slow = await startTestApp("alert-health-notice-slow", { SMTP_URL: smtp.url, RETRY_SCHEDULE: "1h,1h" });
    slowWorkers = startDeliveryWorkers(slow, { smtpTimeoutMs: 5_000, webhookTimeoutMs: 5_000 });
  });
  afterAll(async () => {
    await slowWorkers?.close();
    await slow?.close();
  });

  it("is dropped when its retry comes: the owner gets the notice of the latest disabling only, once", async () => {
    const info = vi.spyOn(slow.deps.logger, "info");
    const owner = unique("owner");
    smtp.rejectRecipient(owner, 451); // the first notice's first try
    const route = receiver.route(`/gone-${++n}`).respond({ status: 410 }, { status: 410 });
    const token = await slow.token("alice", SCOPES, { email: owner });
    const alert = await createAlert(token, { notificationMethod: "webhook", webhookUrl: route.url }, slow);

    await disableThroughFailure(alert, "webhook", route.url, slow);
    const [first] = await waitFor("the first notice to wait for its retry", async () => {
      const delayed = await noticeJobs(slow, alert.alertId, ["delayed"]);
      return delayed.length > 0 && delayed;
    });
    const reEnabled = await slow.app.inject({ method: "PATCH", url: `/v1/risk/alerts/${alert.alertId}`, headers: bearer(token), payload: { status: "active" } });
    expect(reEnabled.statusCode, reEnabled.body).toBe(200);
    await disableThroughFailure(alert, "webhook", route.url, slow);
    // Still waiting for its retry, an hour away: its turn comes now.
    expect(await first!.job.getState()).toBe("delayed");
    await first!.job.promote();

    // Both jobs done: the second sent at once, the first once its retry came.
    const done = await waitFor("both notice jobs to finish", async () => {
      const finished = await noticeJobs(slow, alert.alertId, ["completed", "failed"]);
      return finished.length === 2 && finished;
    });
    expect(done.map(({ state }) => state)).toEqual(["completed", "completed"]);
    expect(noticesTo(owner)).toHaveLength(1);
    const dropped = done.find(({ job }) => job.id === first!.job.id)!;
    expect(dropped.job.attemptsMade).toBe(2);
    expect(info).toHaveBeenCalledWith(
      { alertId: alert.alertId, disabledAt: new Date(first!.job.data.disabledAt).toISOString() },
      "notice of a disabled alert not sent: the alert was re-enabled and disabled again since, and that disabling has its own notice",
    );
    const latest = done.find(({ job }) => job.id !== first!.job.id)!;
    expect(latest.job.data.disabledAt).toBe((await alertRow(slow, alert.alertId)).disabledAt?.getTime());
  });
});
