import { mkdtemp, readFile, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { alerts } from "../../src/db/schema.ts";
import { createChannels } from "../../src/notify/channels/index.ts";
import { classifyOutcome, isDestinationsFault } from "../../src/notify/retry-policy.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { failingFor } from "../helpers/failure-run.ts";
import {
  alertRow,
  attemptsOf,
  isFinished,
  samplePayload,
  seedAlert,
  seedNotification,
  startDeliveryWorkers,
  waitForNotification,
  type DeliveryWorkers,
} from "../helpers/delivery.ts";
import { parseMessage, startSmtpPeer, type SmtpPeer } from "../helpers/smtp-peer.ts";
import { waitFor } from "../helpers/wait.ts";

let t: TestApp;
let smtp: SmtpPeer;
let workers: DeliveryWorkers;
let n = 0;

beforeAll(async () => {
  smtp = await startSmtpPeer();
  t = await startTestApp("email-delivery", { SMTP_URL: smtp.url, EMAIL_FROM: "Wallet Alerts <alerts@wallet-alerts.test>", RETRY_SCHEDULE: "100ms,200ms" });
  // The SMTP peer shares this process, and no test here waits out a timeout: a generous one,
  // so that a stalled answer is not taken for a failure and retried (attempts are counted).
  workers = startDeliveryWorkers(t, { smtpTimeoutMs: 5_000 });
});
afterAll(async () => {
  await workers?.close();
  await smtp?.close();
  await t?.close();
});

const recipient = () => `owner-${++n}@example.com`;
const mailsTo = (address: string) => smtp.messages.filter((mail) => mail.to.includes(address));

describe("email delivery", () => {
  it("sends the alert to its recipient with the subject and both text and HTML parts", async () => {
    const to = recipient();
    const alert = await seedAlert(t, { method: "email", recipient: to });
    const id = await seedNotification(t, alert, "email", to);

    const row = await waitForNotification(t, id, isFinished);
    expect(row.status).toBe("delivered");
    const [mail] = mailsTo(to);
    expect(mail!.from).toBe("alerts@wallet-alerts.test");
    const parsed = parseMessage(mail!.raw);
    expect(parsed.subject).toBe("[Risk alert] Treasury: Large transfer — Sent 25,000 USDC to 9WzD…AWWM");
    expect(parsed.headers.get("to")).toBe(to);
    // The notification id (the same on every attempt) at EMAIL_FROM's domain: a right-hand
    // side that is not a domain is a spam signal (MID_RHS_NOT_FQDN).
    expect(parsed.headers.get("message-id")).toBe(`<${id}@wallet-alerts.test>`);
    expect(parsed.text).toContain("Sent 25,000 USDC to 9WzD…AWWM (threshold 10,000).");
    expect(parsed.text).toContain(alert.address);
    expect(parsed.html).toContain("<strong>Sent 25,000 USDC to 9WzD…AWWM (threshold 10,000).</strong>");
    const [attempt] = await attemptsOf(t, id);
    expect(attempt!.statusCode).toBe(250);
  });

  it("delivers an alias written as RFC 2047 encoded-words as typed: the reader's client decodes no bidi override or line break out of it", async () => {
    const to = recipient();
    const alert = await seedAlert(t, { method: "email", recipient: to });
    const sample = samplePayload(alert);
    const alias = "Cold =?UTF-8?B?4oCu?= 9fQa =?UTF-8?Q?=0AX-Fake:_1?=";
    // A test's subject, which keeps a long alias whole.
    const result = await workers.channels.email.send({
      notificationId: "ntf_encoded_word_alias",
      destination: to,
      payload: { ...sample, type: "risk_alert.test", data: { ...sample.data, alias } },
      secrets: [],
      attemptAt: new Date(),
    });
    expect(result.smtpResponseCode).toBe(250);
    const subject = parseMessage(mailsTo(to)[0]!.raw).subject;
    expect(subject).not.toMatch(/[\u202e\n]/);
    expect(subject.replaceAll("\u2060", "")).toBe(`[Risk alert test] large_transfer on ${alias}`);
  });

  it("links the transaction's, the wallet's and the counterparty's pages on Solscan when EXPLORER_TX_URL and EXPLORER_ADDRESS_URL are unset, and names the counterparty in full", async () => {
    const to = recipient();
    const alert = await seedAlert(t, { method: "email", recipient: to });
    const sample = samplePayload(alert);
    const signature = "5h6xBEauJ3PK6SWCZ1PGjBvj8vDdWG3KpwATGy1ARAXFSDwt8GFXM7W5Ncn16wmqokgpiKRLuS83KUxyZyv2sUYv";
    const counterparty = "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM";
    const blockTime = Math.floor(Date.now() / 1000);
    const transaction = { signature, type: "transfer" as const, amount: 25_000, token: "USDC", mint: null, from: alert.address, to: counterparty, blockTime, slot: 1, fee: 0.000005, status: "success" as const };
    const result = await workers.channels.email.send({
      notificationId: "ntf_explorer_link",
      destination: to,
      payload: { ...sample, data: { ...sample.data, transaction } },
      secrets: [],
      attemptAt: new Date(),
    });
    expect(result.smtpResponseCode).toBe(250);
    const parsed = parseMessage(mailsTo(to)[0]!.raw);
    // The labels' column is as wide as its longest ("Counterparty page"): matched whatever the width.
    expect(parsed.text).toMatch(new RegExp(`^Explorer: +https://solscan\\.io/tx/${signature}$`, "m"));
    expect(parsed.text).toMatch(new RegExp(`^Counterparty: +${counterparty}$`, "m"));
    for (const url of [`https://solscan.io/tx/${signature}`, `https://solscan.io/account/${counterparty}`, `https://solscan.io/account/${alert.address}`]) {
      expect(parsed.html).toContain(`<a href="${url}">${url}</a>`);
    }
  });

  it("marks an email sent more than 10 minutes after its transaction as late, in its subject and first line, as the SMS is", async () => {
    const to = recipient();
    const alert = await seedAlert(t, { method: "email", recipient: to });
    const sample = samplePayload(alert);
    const attemptAt = new Date();
    // Three and a half hours before the attempt, evaluated just now (after an outage, say).
    const blockTime = Math.floor(attemptAt.getTime() / 1000) - 3.5 * 3600;
    const transaction = { signature: "5late", type: "transfer" as const, amount: 25_000, token: "USDC", mint: null, from: alert.address, to: "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM", blockTime, slot: 1, fee: 0.000005, status: "success" as const };
    const payload = { ...sample, timestamp: attemptAt.toISOString(), data: { ...sample.data, transaction } };
    expect((await workers.channels.email.send({ notificationId: "ntf_late_email", destination: to, payload, secrets: [], attemptAt })).smtpResponseCode).toBe(250);
    const parsed = parseMessage(mailsTo(to)[0]!.raw);
    expect(parsed.subject).toBe("[Risk alert (3h ago)] Treasury: Large transfer — Sent 25,000 USDC to 9WzD…AWWM");
    expect(parsed.text!.split(/\r?\n/)[0]).toMatch(/^Sent late: this happened 3h ago, at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\.$/);
  });

  it("marks every message Auto-Submitted, so vacation responders do not answer alerts", async () => {
    const to = recipient();
    const alert = await seedAlert(t, { method: "email", recipient: to });
    const result = await workers.channels.email.send({ notificationId: "ntf_auto_submitted", destination: to, payload: samplePayload(alert), secrets: [], attemptAt: new Date() });
    expect(result.smtpResponseCode).toBe(250);
    expect(mailsTo(to)[0]!.raw).toMatch(/^Auto-Submitted: auto-generated\r?$/m);
  });

  it("delivers an alias with bidi overrides and zero-width characters without them, so the address after it reads as sent", async () => {
    const to = recipient();
    const alert = await seedAlert(t, { method: "email", recipient: to });
    const sample = samplePayload(alert);
    const result = await workers.channels.email.send({
      notificationId: "ntf_bidi_alias",
      destination: to,
      payload: { ...sample, data: { ...sample.data, alias: "Cold \u202ewal\u200blet" } },
      secrets: [],
      attemptAt: new Date(),
    });
    expect(result.smtpResponseCode).toBe(250);
    const parsed = parseMessage(mailsTo(to)[0]!.raw);
    expect(parsed.subject).toBe("[Risk alert] Cold wallet: Large transfer — Sent 25,000 USDC to 9WzD…AWWM");
    expect(parsed.text).toContain(`Wallet:       Cold wallet (${alert.address})`);
    expect(parsed.html).toContain(`<td>Cold wallet (${alert.address})</td>`);
  });

  it("marks a test notification in the subject", async () => {
    const to = recipient();
    const alert = await seedAlert(t, { method: "email", recipient: to });
    const id = await seedNotification(t, alert, "email", to, { type: "risk_alert.test" });
    await waitForNotification(t, id, isFinished);
    expect(parseMessage(mailsTo(to)[0]!.raw).subject).toBe("[Risk alert test] large_transfer on Treasury");
  });

  it("retries after a 451 and delivers on the next attempt", async () => {
    const to = recipient();
    smtp.rejectRecipient(to, 451);
    const alert = await seedAlert(t, { method: "email", recipient: to });
    const id = await seedNotification(t, alert, "email", to);

    const row = await waitForNotification(t, id, isFinished);
    expect(row.status).toBe("delivered");
    const attempts = await attemptsOf(t, id);
    expect(attempts.map((a) => a.statusCode)).toEqual([451, 250]);
    expect(attempts[0]!.error).toContain("451");
    expect(mailsTo(to)).toHaveLength(1);
  });

  it("fails at once on a 550", async () => {
    const to = recipient();
    smtp.rejectRecipient(to, 550);
    const alert = await seedAlert(t, { method: "email", recipient: to });
    const id = await seedNotification(t, alert, "email", to);

    const row = await waitForNotification(t, id, isFinished);
    expect(row.status).toBe("failed");
    const attempts = await attemptsOf(t, id);
    expect(attempts).toHaveLength(1);
    expect(attempts[0]!.statusCode).toBe(550);
    expect(mailsTo(to)).toHaveLength(0);
  });

  it("emails the owner of an email alert when it is disabled after 24 hours of failures", async () => {
    const to = recipient();
    smtp.rejectRecipient(to, 550);
    const alert = await seedAlert(t, { method: "email", recipient: to });
    await failingFor(t, alert.alertId);
    const id = await seedNotification(t, alert, "email", to);

    expect((await waitForNotification(t, id, isFinished)).status).toBe("failed");
    // The alert is disabled in a statement of its own (just before the attempt is recorded), so it is waited for.
    await waitFor("the alert to be disabled", async () => (await alertRow(t, alert.alertId)).status === "disabled");
    // The owner is emailed after the alert is marked disabled, so the notice may still be on its way.
    const notice = await waitFor(`a mail to ${to}`, async () => mailsTo(to)[0]);
    const parsed = parseMessage(notice.raw);
    expect(parsed.subject).toBe("[Risk alert disabled] large_transfer on Treasury");
    expect(parsed.text).toContain(`PATCH /v1/risk/alerts/${alert.alertId} with {"status": "active"}`);
    expect(parsed.text).toContain(`on Treasury (${alert.address}) has been disabled`);
    expect(parsed.text).toContain(`Its notifications go by email to ${to}.`);
  });

  it("retries when the SMTP server cannot be reached", async () => {
    const closed = await startSmtpPeer();
    await closed.close();
    const channels = createChannels({ ...t.config, smtpUrl: closed.url }, t.deps.logger, { smtpTimeoutMs: 1_000 });
    try {
      const alert = await seedAlert(t, { method: "email", recipient: "x@example.com" });
      const result = await channels.email.send({
        notificationId: "ntf_unreachable",
        destination: "x@example.com",
        payload: samplePayload(alert),
        secrets: [],
        attemptAt: new Date(),
      });
      expect(result.smtpResponseCode).toBeUndefined();
      expect(result.errorCode).toMatch(/^E[A-Z]+$/);
      // The attempt log is the alert owner's to read: the operator's mail server is not named.
      expect(result.error).not.toContain(String(closed.port));
      expect(classifyOutcome(result)).toBe("retry");
    } finally {
      await channels.close();
    }
  });

  it("writes .eml files to the outbox with EMAIL_TRANSPORT=outbox and no SMTP_URL, and says in the attempt that they were not sent", async () => {
    const outboxDir = await mkdtemp(join(tmpdir(), "wa-outbox-"));
    // EXPLORER_TX_URL set empty: no explorer link.
    const channels = createChannels({ ...t.config, smtpUrl: undefined, emailTransport: "outbox", explorerTxUrl: undefined }, t.deps.logger, { outboxDir });
    try {
      const alert = await seedAlert(t, { method: "email", recipient: "demo@example.com" });
      const result = await channels.email.send({
        notificationId: "ntf_outbox",
        destination: "demo@example.com",
        payload: samplePayload(alert),
        secrets: [],
        attemptAt: new Date(),
      });
      expect(classifyOutcome(result)).toBe("delivered");
      expect(result.notSent).toBe(true);
      expect(result.responseBody).toBe(`not sent: written to ${outboxDir}/ntf_outbox.eml (EMAIL_TRANSPORT=outbox)`);
      expect(await readdir(outboxDir)).toEqual(["ntf_outbox.eml"]);
      const parsed = parseMessage(await readFile(join(outboxDir, "ntf_outbox.eml"), "utf8"));
      expect(parsed.subject).toBe("[Risk alert] Treasury: Large transfer — Sent 25,000 USDC to 9WzD…AWWM");
      expect(parsed.headers.get("to")).toBe("demo@example.com");
      expect(parsed.text).toContain("Sent 25,000 USDC");
      expect(parsed.text).not.toContain("Explorer:");
      expect(parsed.html).toContain("<table");
    } finally {
      await channels.close();
      await rm(outboxDir, { recursive: true, force: true });
    }
  });

  it("writes no file and fails the attempt as the deployment's fault naming SMTP_URL when neither SMTP_URL nor EMAIL_TRANSPORT=outbox is set", async () => {
    const outboxDir = await mkdtemp(join(tmpdir(), "wa-outbox-"));
    const channels = createChannels({ ...t.config, smtpUrl: undefined, emailTransport: undefined }, t.deps.logger, { outboxDir });
    try {
      const alert = await seedAlert(t, { method: "email", recipient: "demo@example.com" });
      const result = await channels.email.send({
        notificationId: "ntf_nowhere",
        destination: "demo@example.com",
        payload: samplePayload(alert),
        secrets: [],
        attemptAt: new Date(),
      });
      expect(result).toMatchObject({ deploymentFault: "unconfigured", error: expect.stringContaining("SMTP_URL") });
      expect(classifyOutcome(result)).toBe("retry");
      expect(isDestinationsFault(result)).toBe(false);
      expect(channels.describe().email).toBe("off (SMTP_URL not set)");
      expect(await readdir(outboxDir)).toEqual([]);
    } finally {
      await channels.close();
      await rm(outboxDir, { recursive: true, force: true });
    }
  });
});

// The operator's SMTP login, not the recipient, is wrong: the message must wait for the fix.
describe("email delivery when the SMTP server refuses the service's login", () => {
  let loginApp: TestApp;
  let loginSmtp: SmtpPeer;
  let loginWorkers: DeliveryWorkers;

  beforeAll(async () => {
    loginSmtp = await startSmtpPeer({ login: { user: "alerts", password: "the-right-one" } });
    loginApp = await startTestApp("email-login", {
      SMTP_URL: `smtp://alerts:a-wrong-one@127.0.0.1:${loginSmtp.port}`,
      EMAIL_FROM: "alerts@wallet-alerts.test",
      RETRY_SCHEDULE: "300ms,300ms,300ms",
    });
    loginWorkers = startDeliveryWorkers(loginApp, { smtpTimeoutMs: 5_000 });
  });
  afterAll(async () => {
    await loginWorkers?.close();
    await loginSmtp?.close();
    await loginApp?.close();
  });

  // First: once a login is accepted, the pooled connection stays logged in.
  it("never disables an alert for refused logins, even when its schedule runs out", async () => {
    const to = recipient();
    const alert = await seedAlert(loginApp, { method: "email", recipient: to });
    // A day of permanent failures already: one more counted failure would disable the alert.
    await failingFor(loginApp, alert.alertId);
    const id = await seedNotification(loginApp, alert, "email", to);

    const row = await waitForNotification(loginApp, id, isFinished);
    expect(row.status).toBe("failed");
    expect((await attemptsOf(loginApp, id)).map((attempt) => attempt.statusCode)).toEqual([535, 535, 535, 535]);
    expect((await alertRow(loginApp, alert.alertId)).status).toBe("active");
  });

  it("keeps retrying a 535 and delivers once the login is accepted, without counting it against the alert", async () => {
    const to = recipient();
    const alert = await seedAlert(loginApp, { method: "email", recipient: to });
    const id = await seedNotification(loginApp, alert, "email", to);

    const refused = await waitForNotification(loginApp, id, (row) => row.attemptCount >= 1);
    expect(refused.status).toBe("retrying");
    const [first] = await attemptsOf(loginApp, id);
    expect(first!.statusCode).toBe(535);

    loginSmtp.acceptLogin("alerts", "a-wrong-one"); // the operator's fix, seen from the server
    expect((await waitForNotification(loginApp, id, isFinished)).status).toBe("delivered");
    expect(loginSmtp.messages.filter((mail) => mail.to.includes(to))).toHaveLength(1);
    const row = await alertRow(loginApp, alert.alertId);
    expect(row.status).toBe("active");
    expect(row.failingSince).toBeNull();
  });
});

// The operator's sender address, not the recipient, is refused: the message must wait for the fix.
describe("email delivery when the SMTP server refuses the service's sender at MAIL FROM", () => {
  const sender = "alerts@wallet-alerts.test";
  const notOwned = "5.7.1 Sender address rejected: not owned by user";
  let senderApp: TestApp;
  let senderSmtp: SmtpPeer;
  let senderWorkers: DeliveryWorkers;

  beforeAll(async () => {
    senderSmtp = await startSmtpPeer();
    senderApp = await startTestApp("email-sender", {
      SMTP_URL: senderSmtp.url,
      EMAIL_FROM: `Wallet Alerts <${sender}>`,
      RETRY_SCHEDULE: "300ms,300ms,300ms",
    });
    senderWorkers = startDeliveryWorkers(senderApp, { smtpTimeoutMs: 5_000 });
  });
  afterEach(() => senderSmtp.acceptSender(sender));
  afterAll(async () => {
    await senderWorkers?.close();
    await senderSmtp?.close();
    await senderApp?.close();
  });

  it("never disables an alert for a sender refused at MAIL FROM (553), even when its schedule runs out", async () => {
    senderSmtp.refuseSender(sender, 553, notOwned);
    const to = recipient();
    const alert = await seedAlert(senderApp, { method: "email", recipient: to });
    // A day of permanent failures already: one more counted failure would disable the alert.
    await failingFor(senderApp, alert.alertId);
    const id = await seedNotification(senderApp, alert, "email", to);

    const row = await waitForNotification(senderApp, id, isFinished);
    expect(row.status).toBe("failed");
    const attempts = await attemptsOf(senderApp, id);
    expect(attempts.map((attempt) => attempt.statusCode)).toEqual([553, 553, 553, 553]);
    expect(attempts[0]!.error).toContain("Sender address rejected");
    expect((await alertRow(senderApp, alert.alertId)).status).toBe("active");
  });

  it("keeps retrying a 553 at MAIL FROM and delivers once the sender is taken, without starting a failure run", async () => {
    senderSmtp.refuseSender(sender, 553, notOwned);
    const to = recipient();
    const alert = await seedAlert(senderApp, { method: "email", recipient: to });
    const id = await seedNotification(senderApp, alert, "email", to);

    const refused = await waitForNotification(senderApp, id, (row) => row.attemptCount >= 1);
    expect(refused.status).toBe("retrying");
    expect((await alertRow(senderApp, alert.alertId)).failingSince).toBeNull();

    senderSmtp.acceptSender(sender); // the operator's fix, seen from the server
    expect((await waitForNotification(senderApp, id, isFinished)).status).toBe("delivered");
    const mails = senderSmtp.messages.filter((mail) => mail.to.includes(to));
    expect(mails).toHaveLength(1);
    // The retry carries the Message-ID every attempt has: the notification id at EMAIL_FROM's domain.
    expect(parseMessage(mails[0]!.raw).headers.get("message-id")).toBe(`<${id}@wallet-alerts.test>`);
    const row = await alertRow(senderApp, alert.alertId);
    expect(row.status).toBe("active");
    expect(row.failingSince).toBeNull();
  });
});

// SMTP_URL's server refuses to relay for the service's login (or, a sandbox, to send to an
// unverified address): the operator's account, not the recipient, must change.
describe("email delivery when the SMTP relay refuses to relay for the service", () => {
  const relayDenied = (to: string) => `5.7.1 <${to}>: Relay access denied`;

  it("keeps retrying a 554 5.7.1 Relay access denied at RCPT TO and never disables the alert, even when its schedule runs out", async () => {
    const to = recipient();
    for (let i = 0; i < 3; i++) smtp.rejectRecipient(to, 554, relayDenied(to));
    const alert = await seedAlert(t, { method: "email", recipient: to });
    // A day of permanent failures already: one more counted failure would disable the alert.
    await failingFor(t, alert.alertId);
    const id = await seedNotification(t, alert, "email", to);

    const row = await waitForNotification(t, id, isFinished);
    expect(row.status).toBe("failed");
    const attempts = await attemptsOf(t, id);
    expect(attempts.map((attempt) => attempt.statusCode)).toEqual([554, 554, 554]);
    expect(attempts[0]!.error).toContain("Relay access denied");
    expect((await alertRow(t, alert.alertId)).status).toBe("active");
  });

  it("retries Office 365's 5.7.64 and a sandbox's unverified address, and delivers once relaying is allowed, without starting a failure run", async () => {
    const to = recipient();
    smtp.rejectRecipient(to, 550, "5.7.64 TenantAttribution; Relay Access Denied");
    smtp.rejectRecipient(to, 554, "Message rejected: Email address is not verified. The following identities failed the check in region US-EAST-1: " + to);
    const alert = await seedAlert(t, { method: "email", recipient: to });
    const id = await seedNotification(t, alert, "email", to);

    const row = await waitForNotification(t, id, isFinished);
    expect(row.status).toBe("delivered");
    expect((await attemptsOf(t, id)).map((attempt) => attempt.statusCode)).toEqual([550, 554, 250]);
    expect(mailsTo(to)).toHaveLength(1);
    expect((await alertRow(t, alert.alertId)).failingSince).toBeNull();
  });
});

// SMTP_URL's server is down: the outage is the operator's, however long it lasts.
describe("email delivery while the service's SMTP server cannot be reached", () => {
  let downApp: TestApp;
  let downWorkers: DeliveryWorkers;

  beforeAll(async () => {
    const closed = await startSmtpPeer();
    await closed.close();
    downApp = await startTestApp("email-smtp-down", { SMTP_URL: closed.url, EMAIL_FROM: "alerts@wallet-alerts.test", RETRY_SCHEDULE: "100ms,200ms" });
    downWorkers = startDeliveryWorkers(downApp, { smtpTimeoutMs: 1_000 });
  });
  afterAll(async () => {
    await downWorkers?.close();
    await downApp?.close();
  });

  it("never counts the outage against an alert when the schedule runs out: no run started, none extended into a disabling", async () => {
    const failingTo = recipient();
    const healthyTo = recipient();
    const failing = await seedAlert(downApp, { method: "email", recipient: failingTo });
    const since = new Date(Date.now() - 25 * 3_600_000);
    await downApp.deps.db.update(alerts).set({ failingSince: since }).where(eq(alerts.id, failing.alertId));
    const healthy = await seedAlert(downApp, { method: "email", recipient: healthyTo });
    const ids = [await seedNotification(downApp, failing, "email", failingTo), await seedNotification(downApp, healthy, "email", healthyTo)];

    for (const id of ids) {
      const row = await waitForNotification(downApp, id, isFinished);
      expect(row.status).toBe("failed");
      expect(row.attemptCount).toBe(3);
      expect((await attemptsOf(downApp, id))[0]!.error).toMatch(/^E[A-Z]+: /);
    }
    const failingRow = await alertRow(downApp, failing.alertId);
    expect(failingRow.status).toBe("active");
    expect(failingRow.failingSince).toEqual(since);
    expect((await alertRow(downApp, healthy.alertId)).failingSince).toBeNull();
  });
});
