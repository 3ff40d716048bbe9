// Postfix, by default, reports its refusal of the service's sender, client address or EHLO name
// as the reply to RCPT TO, and providers refuse an account at the greeting or at the end of
// DATA. None of that is the recipient's: the notification is retried on its schedule, never
// counted against its alert, and the operator is told which setting to fix, at error on every
// attempt (README, Notifications).
import { Writable } from "node:stream";
import { eq } from "drizzle-orm";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { alerts } from "../../src/db/schema.ts";
import { createLogger } from "../../src/logger.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import {
  alertRow,
  attemptsOf,
  isFinished,
  seedAlert,
  seedNotification,
  startDeliveryWorkers,
  waitForNotification,
  type DeliveryWorkers,
} from "../helpers/delivery.ts";
import { startPostfixPeer, type DelayedRestriction, type PostfixPeer } from "../helpers/postfix-peer.ts";

const sender = "alerts@wallet-alerts.test";
let t: TestApp;
let postfix: PostfixPeer;
let workers: DeliveryWorkers;
const lines: string[] = [];
let n = 0;
/** A worker's log, at warn and above, as an operator reads it. */
const sinkFor = (kept: string[]) => createLogger("warn", new Writable({ write: (chunk, _encoding, done) => (kept.push(String(chunk)), done()) }));

beforeAll(async () => {
  postfix = await startPostfixPeer();
  t = await startTestApp("email-postfix-refusals", {
    SMTP_URL: postfix.url,
    EMAIL_FROM: `Wallet Alerts <${sender}>`,
    RETRY_SCHEDULE: "300ms,300ms,300ms",
  });
  workers = startDeliveryWorkers({ ...t, deps: { ...t.deps, logger: sinkFor(lines) } }, { smtpTimeoutMs: 5_000 });
});
afterEach(() => postfix.acceptAll());
afterAll(async () => {
  await workers?.close();
  await postfix?.close();
  await t?.close();
});

const recipient = () => `desk-${++n}@example.com`;
const mailsTo = (address: string) => postfix.messages.filter((mail) => mail.to.includes(address));
type LogEntry = { level: number; msg: string; notificationId?: string; error?: string };
const logged = (notificationId: string, kept: readonly string[] = lines): LogEntry[] =>
  kept.map((line) => JSON.parse(line) as LogEntry).filter((entry) => entry.notificationId === notificationId);
/** An alert that has failed for a day already: one more counted failure disables it. */
async function failingAlert(to: string) {
  const alert = await seedAlert(t, { method: "email", recipient: to });
  const since = new Date(Date.now() - 25 * 3_600_000);
  await t.deps.db.update(alerts).set({ failingSince: since }).where(eq(alerts.id, alert.alertId));
  return { alert, since };
}

describe("Postfix's refusals at RCPT TO", () => {
  it("retries a sender refused at RCPT TO (553 5.7.1 not owned by user), logs an error naming EMAIL_FROM, and delivers once it is allowed; a recipient refused there still fails at once and counts", async () => {
    // The recipient's own refusal at RCPT TO: permanent, and it starts the alert's failure run.
    const gone = recipient();
    postfix.unknownRecipient(gone);
    const goneAlert = await seedAlert(t, { method: "email", recipient: gone });
    const goneId = await seedNotification(t, goneAlert, "email", gone);
    expect((await waitForNotification(t, goneId, isFinished)).status).toBe("failed");
    expect((await attemptsOf(t, goneId)).map((attempt) => attempt.statusCode)).toEqual([550]);
    expect((await alertRow(t, goneAlert.alertId)).failingSince).not.toBeNull();

    // The operator's login may not send as EMAIL_FROM: Postfix says so at RCPT TO.
    postfix.restrictAtRcpt({ kind: "sender-not-owned", login: "alerts" });
    const to = recipient();
    const alert = await seedAlert(t, { method: "email", recipient: to });
    const id = await seedNotification(t, alert, "email", to);

    const refused = await waitForNotification(t, id, (row) => row.attemptCount >= 1);
    expect(refused.status).toBe("retrying");
    const [first] = await attemptsOf(t, id);
    expect(first!.statusCode).toBe(553);
    expect(first!.error).toContain(`<${sender}>: Sender address rejected: not owned by user alerts`);
    expect((await alertRow(t, alert.alertId)).failingSince).toBeNull();
    const errors = logged(id).filter((entry) => entry.level === 50);
    expect(errors.length).toBeGreaterThanOrEqual(1);
    expect(errors[0]!.msg).toContain("EMAIL_FROM");
    expect(errors[0]!.error).toContain("Sender address rejected");

    postfix.acceptAll(); // the login may now send as EMAIL_FROM
    expect((await waitForNotification(t, id, isFinished)).status).toBe("delivered");
    expect(mailsTo(to)).toHaveLength(1);
    const row = await alertRow(t, alert.alertId);
    expect(row.status).toBe("active");
    expect(row.failingSince).toBeNull();
  });

  it.each<[string, DelayedRestriction, number]>([
    ["its client address (554 5.7.1 Client host rejected)", { kind: "client-host" }, 554],
    ["its EHLO name (504 5.5.2 Helo command rejected)", { kind: "helo-not-fqdn" }, 504],
    ["its sender's domain (450 4.1.8 Sender address rejected: Domain not found)", { kind: "sender-domain-not-found" }, 450],
  ])("never disables an alert whose mail Postfix refuses at RCPT TO for %s, even when the schedule runs out", async (_what, restriction, code) => {
    postfix.restrictAtRcpt(restriction);
    const to = recipient();
    const { alert, since } = await failingAlert(to);
    const id = await seedNotification(t, alert, "email", to);

    expect((await waitForNotification(t, id, isFinished)).status).toBe("failed");
    expect((await attemptsOf(t, id)).map((attempt) => attempt.statusCode)).toEqual([code, code, code, code]);
    const row = await alertRow(t, alert.alertId);
    expect(row.status).toBe("active");
    expect(row.failingSince).toEqual(since);
    expect(logged(id).filter((entry) => entry.level === 50)).toHaveLength(4);
  });
});

describe("a 5xx from the SMTP server outside RCPT TO", () => {
  it("retries Amazon SES's 554 at the end of DATA (sending paused) without counting it, logs an error with the reply naming SMTP_URL's login, and delivers once the account sends again", async () => {
    postfix.refuseEndOfData(554, "Message rejected: Sending paused for this account. For more information, please check the AWS Management Console.");
    const to = recipient();
    const { alert } = await failingAlert(to);
    const id = await seedNotification(t, alert, "email", to);

    const refused = await waitForNotification(t, id, (row) => row.attemptCount >= 1);
    expect(refused.status).toBe("retrying");
    expect((await attemptsOf(t, id))[0]!.error).toContain("554: 554 Message rejected: Sending paused for this account.");
    expect((await alertRow(t, alert.alertId)).status).toBe("active");
    const [error] = logged(id).filter((entry) => entry.level === 50);
    expect(error!.msg).toContain("the login in SMTP_URL");
    expect(error!.error).toContain("Sending paused for this account");

    postfix.acceptAll(); // the account is resumed
    expect((await waitForNotification(t, id, isFinished)).status).toBe("delivered");
    expect(mailsTo(to)).toHaveLength(1);
    expect((await alertRow(t, alert.alertId)).status).toBe("active");
  });
});

// A server that refuses this worker at the greeting: its own peer, so that no connection the
// pool opened before is reused (the greeting is the first reply of a connection).
describe("a 5xx greeting from the SMTP server", () => {
  let greetingPeer: PostfixPeer;
  let greetingApp: TestApp;
  let greetingWorkers: DeliveryWorkers;
  const greetingLines: string[] = [];

  beforeAll(async () => {
    greetingPeer = await startPostfixPeer();
    greetingPeer.refuseGreeting(554, "mail.example.net ESMTP not accepting connections from this network");
    greetingApp = await startTestApp("email-postfix-greeting", {
      SMTP_URL: greetingPeer.url,
      EMAIL_FROM: `Wallet Alerts <${sender}>`,
      RETRY_SCHEDULE: "300ms,300ms,300ms",
    });
    greetingWorkers = startDeliveryWorkers({ ...greetingApp, deps: { ...greetingApp.deps, logger: sinkFor(greetingLines) } }, { smtpTimeoutMs: 5_000 });
  });
  afterAll(async () => {
    await greetingWorkers?.close();
    await greetingPeer?.close();
    await greetingApp?.close();
  });

  it("never disables an alert for a server that refuses this worker at the greeting (554), even when the schedule runs out, and logs an error with the reply on every attempt", async () => {
    const to = recipient();
    const alert = await seedAlert(greetingApp, { method: "email", recipient: to });
    const since = new Date(Date.now() - 25 * 3_600_000);
    await greetingApp.deps.db.update(alerts).set({ failingSince: since }).where(eq(alerts.id, alert.alertId));
    const id = await seedNotification(greetingApp, alert, "email", to);

    expect((await waitForNotification(greetingApp, id, isFinished)).status).toBe("failed");
    const attempts = await attemptsOf(greetingApp, id);
    expect(attempts.map((attempt) => attempt.statusCode)).toEqual([554, 554, 554, 554]);
    expect(attempts[0]!.error).toContain("not accepting connections");
    const row = await alertRow(greetingApp, alert.alertId);
    expect(row.status).toBe("active");
    expect(row.failingSince).toEqual(since);
    const errors = logged(id, greetingLines).filter((entry) => entry.level === 50);
    expect(errors).toHaveLength(4);
    for (const error of errors) {
      expect(error.msg).toContain("the login in SMTP_URL");
      expect(error.error).toContain("not accepting connections");
    }
  });
});
