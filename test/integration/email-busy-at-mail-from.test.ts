// An SMTP server that answers MAIL FROM with a 4xx ("451 4.3.0 Temporary local problem") is busy
// or in trouble for a while, as it is at any step but RCPT TO: the notification is retried and
// the worker says so at warn, once a minute (README, Notifications). It used to be taken for a
// refusal of the service's sender, logged at error on every attempt and naming EMAIL_FROM, which
// sent an operator to change a setting that was right.
import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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
import { startSmtpPeer, type SmtpPeer } from "../helpers/smtp-peer.ts";

const sender = "alerts@wallet-alerts.test";
let t: TestApp;
let smtp: SmtpPeer;
let workers: DeliveryWorkers;
/** The worker's log, at warn and above, as an operator reads it. */
const lines: string[] = [];

beforeAll(async () => {
  smtp = await startSmtpPeer();
  t = await startTestApp("email-busy-at-mail-from", {
    SMTP_URL: smtp.url,
    EMAIL_FROM: `Wallet Alerts <${sender}>`,
    RETRY_SCHEDULE: "300ms,300ms,300ms",
  });
  const logger = createLogger("warn", new Writable({ write: (chunk, _encoding, done) => (lines.push(String(chunk)), done()) }));
  workers = startDeliveryWorkers({ ...t, deps: { ...t.deps, logger } }, { smtpTimeoutMs: 5_000 });
});
afterAll(async () => {
  await workers?.close();
  await smtp?.close();
  await t?.close();
});

type LogEntry = { level: number; msg: string; notificationId?: string; err?: { message?: string } };
const logged = (notificationId: string) => lines.map((line) => JSON.parse(line) as LogEntry).filter((entry) => entry.notificationId === notificationId);

describe("a 4xx at MAIL FROM", () => {
  it("is retried and logged at warn as the SMTP server's trouble, not at error as a refused sender, and delivers once the server takes mail again", async () => {
    smtp.refuseSender(sender, 451, "4.3.0 Temporary local problem, try again later");
    const to = "desk@example.com";
    const alert = await seedAlert(t, { method: "email", recipient: to });
    const id = await seedNotification(t, alert, "email", to);

    expect((await waitForNotification(t, id, (row) => row.attemptCount >= 1)).status).toBe("retrying");
    expect((await attemptsOf(t, id))[0]!.statusCode).toBe(451);
    const entries = logged(id);
    expect(entries.filter((entry) => entry.level === 50), JSON.stringify(entries)).toEqual([]);
    const [warning] = entries.filter((entry) => entry.level === 40);
    expect(warning!.msg).toContain("the email provider cannot take messages now");
    expect(warning!.err!.message).toContain("Temporary local problem");

    smtp.acceptSender(sender); // the server is back
    expect((await waitForNotification(t, id, isFinished)).status).toBe("delivered");
    expect(smtp.messages.filter((mail) => mail.to.includes(to))).toHaveLength(1);
    expect((await alertRow(t, alert.alertId)).failingSince).toBeNull();
  });
});
