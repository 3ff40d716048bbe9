// A provider that refuses a recipient names it in its own words: Twilio's 21211 the number, an
// SMTP server's RCPT TO reply the address. Those words are the owner's record of the attempt
// (delivery_attempts.error, kept whole), but the worker's warn lines go to every log pipeline
// and a failed job's failedReason and stacktrace stay in Redis for a week, shown in Bull Board:
// there the number keeps its last 4 digits and the address its first character and domain
// (privacy review, finding 3). A real SMTP server and the Twilio stand-in on loopback, the
// worker as runWorkers runs it, logging at info.
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { alerts } from "../../src/db/schema.ts";
import { QUEUES } from "../../src/queue/names.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { attemptsOf, isFinished, seedAlert, seedNotification, waitForNotification } from "../helpers/delivery.ts";
import { startSmtpPeer, type SmtpPeer } from "../helpers/smtp-peer.ts";
import { startTwilioStandin, twilioSettings, type TwilioStandin } from "../helpers/twilio-standin.ts";
import { waitFor } from "../helpers/wait.ts";
import { startWorkersBehindProxy, type WorkersBehindProxy } from "../helpers/workers-behind-proxy.ts";

const ADDRESS = "bounce.jane@fund.example";
const NUMBER = "+14155552699";

let smtp: SmtpPeer;
let standin: TwilioStandin;
let t: TestApp;
let workers: WorkersBehindProxy;

beforeAll(async () => {
  smtp = await startSmtpPeer();
  standin = await startTwilioStandin();
  const providers = { SMTP_URL: smtp.url, EMAIL_FROM: "Wallet Alerts <alerts@wallet-alerts.test>", ...twilioSettings(standin.baseUrl) };
  t = await startTestApp("recipient-refusal-log", providers);
  workers = await startWorkersBehindProxy(t, [QUEUES.deliverEmail, QUEUES.deliverSms], providers);
});
afterAll(async () => {
  await workers?.close();
  await standin?.close();
  await smtp?.close();
  await t?.close();
});

type LogLine = { msg: string; notificationId?: string; alertId?: string; error?: string; lastError?: string };
const logged = (): LogLine[] => workers.logLines.map((line) => JSON.parse(line) as LogLine);

/** Everything Redis keeps of the queue's failed jobs: their reasons, stacktraces and the queue's events stream. */
async function keptInRedis(queue: (typeof QUEUES)["deliverEmail" | "deliverSms"]): Promise<string> {
  const failed = await t.deps.queues[queue].getFailed();
  const events = await t.deps.redis.xrange(`${t.config.queuePrefix}:${queue}:events`, "-", "+");
  expect(failed.length).toBeGreaterThan(0);
  expect(JSON.stringify(events)).toContain('"failed"');
  return JSON.stringify({ failed: failed.map((job) => [job.id, job.failedReason, job.stacktrace]), events });
}

/** An alert whose notifications have failed for a day already, the last an hour ago: this failure disables it, and its owner is told. */
async function failingAlert(method: "email" | "sms", recipient: string) {
  const alert = await seedAlert(t, { method, recipient });
  await t.deps.db.update(alerts).set({ failingSince: new Date(Date.now() - 25 * 3_600_000) }).where(eq(alerts.id, alert.alertId));
  const earlier = await seedNotification(t, alert, method, recipient, { enqueue: false });
  await t.deps.sql`update notifications set status = 'failed', updated_at = now() - interval '1 hour' where id = ${earlier}`;
  return alert;
}

describe("a recipient refused by the provider, in the log and the queue", () => {
  it("masks Twilio's 21211 naming the number in the `job failed` line, the disabling's line and the job's failedReason, and keeps it whole in the attempt", async () => {
    standin.refuseRecipient(NUMBER, { status: 400, code: 21211, message: `The 'To' number ${NUMBER} is not a valid phone number.` });
    const alert = await failingAlert("sms", NUMBER);
    const id = await seedNotification(t, alert, "sms", NUMBER);
    expect((await waitForNotification(t, id, isFinished)).status).toBe("failed");
    const failedLine = await waitFor("the job failed line", async () => logged().find((line) => line.msg === "job failed" && line.notificationId === id));

    expect(failedLine.error).toContain("Twilio 21211: The 'To' number +*******2699 is not a valid phone number.");
    const disabled = logged().find((line) => line.msg.startsWith("alert disabled") && line.alertId === alert.alertId);
    expect(disabled?.lastError).toContain("+*******2699");
    const job = await t.deps.queues[QUEUES.deliverSms].getJob(id);
    expect(job?.failedReason).toContain("+*******2699");
    expect(workers.logLines.join("\n")).not.toContain("4155552699");
    expect(await keptInRedis(QUEUES.deliverSms)).not.toContain("4155552699");
    // The owner's own record keeps Twilio's words whole.
    expect((await attemptsOf(t, id)).map((attempt) => attempt.error)).toEqual([expect.stringContaining(`The 'To' number ${NUMBER} is not`)]);
  });

  it("masks an SMTP server's refusal at RCPT TO naming the address, in the delivery's job and in the disabled notice's, and keeps it whole in the attempt", async () => {
    const refusal = `<${ADDRESS}>: Recipient address rejected: User unknown in virtual mailbox table`;
    // Twice: the notification, then the notice of the disabled alert, which goes to the same
    // mailbox when its owner's token named no email (alert-health.ts noticeAddress).
    smtp.rejectRecipient(ADDRESS, 550, refusal);
    smtp.rejectRecipient(ADDRESS, 550, refusal);
    const alert = await failingAlert("email", ADDRESS);
    const id = await seedNotification(t, alert, "email", ADDRESS);
    expect((await waitForNotification(t, id, isFinished)).status).toBe("failed");
    const failedLine = await waitFor("the job failed line", async () => logged().find((line) => line.msg === "job failed" && line.notificationId === id));
    const noticeGaveUp = await waitFor("the notice given up", async () =>
      logged().find((line) => line.msg.startsWith("gave up telling the owner") && line.alertId === alert.alertId),
    );
    await waitFor("the notice's job failed line", async () => logged().find((line) => line.msg === "job failed" && line.alertId === alert.alertId && line.notificationId === undefined));

    expect(failedLine.error).toContain("550 <b***@fund.example>: Recipient address rejected");
    expect(noticeGaveUp.error).toContain("<b***@fund.example>");
    expect(workers.logLines.join("\n").toLowerCase()).not.toContain(ADDRESS);
    expect((await keptInRedis(QUEUES.deliverEmail)).toLowerCase()).not.toContain(ADDRESS);
    expect((await attemptsOf(t, id)).map((attempt) => attempt.error)).toEqual([expect.stringContaining(`<${ADDRESS}>: Recipient address rejected`)]);
  });
});
