// EMAIL_PER_CALLER_PER_HOUR: firings are not capped and anyone can make a public address fire with
// dust, so one caller's email alerts could send thousands of emails an hour through the
// operator's one SMTP account, which the provider would then throttle for every caller. Past its
// budget a caller's emails fail unsent, saying why, without counting against their alerts, and
// its owner can redeliver them once the hour has turned. Other callers' emails go on. A real
// SMTP server on loopback, real Redis, the real delivery workers.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestApp } from "../helpers/app.ts";
import { alertRow, attemptsOf, isFinished, seedAlert, seedNotification, waitForNotification } from "../helpers/delivery.ts";
import { startHourlyBudgetRig, type HourlyBudgetRig } from "../helpers/hourly-budget-rig.ts";
import { bearer } from "../helpers/seed.ts";
import { startSmtpPeer, type SmtpPeer } from "../helpers/smtp-peer.ts";
import { waitFor } from "../helpers/wait.ts";

let t: TestApp;
let rig: HourlyBudgetRig;
let smtp: SmtpPeer;

beforeAll(async () => {
  smtp = await startSmtpPeer();
  rig = await startHourlyBudgetRig(
    "email-budget",
    { SMTP_URL: smtp.url, EMAIL_FROM: "alerts@wallet-alerts.test", EMAIL_PER_CALLER_PER_HOUR: "2", RETRY_SCHEDULE: "300ms,300ms,300ms" },
    { smtpTimeoutMs: 5_000 },
  );
  t = rig.t;
});
afterAll(async () => {
  await rig?.close();
  await smtp?.close();
});

const sample = (name: string) => rig.sample(name);
const emailAttempts = async (outcome: string) => sample(`delivery_attempts_total\\{channel="email",outcome="${outcome}"\\}`);
const givenUpForBudget = () => sample(`deliveries_given_up_total\\{channel="email",cause="email_budget"\\}`);
const sentTo = (to: string) => smtp.messages.filter((mail) => mail.to.includes(to)).length;
const budgetWarnings = (owner: string) =>
  rig.lines
    .map((line) => JSON.parse(line) as { level: number; msg: string; owner?: string; emailPerCallerPerHour?: number })
    .filter((entry) => entry.owner === owner && entry.msg.includes("EMAIL_PER_CALLER_PER_HOUR"));

/** An email alert of `owner`'s to `to` and one notification of it, enqueued. */
async function emailNotification(owner: string, to: string) {
  const alert = await seedAlert(t, { method: "email", recipient: to, owner });
  return { alert, to, id: await seedNotification(t, alert, "email", to) };
}
const status = async (id: string) => (await waitForNotification(t, id, isFinished)).status;
const redeliver = async (owner: string, id: string) =>
  t.app.inject({ method: "POST", url: `/v1/notifications/${id}/redeliver`, headers: bearer(await t.token(owner)) });

describe("the email budget per caller and clock hour", () => {
  let heldBack: Awaited<ReturnType<typeof emailNotification>>;

  it("starts its refusal counter at zero", async () => {
    expect(await sample("email_budget_refusals_total")).toBe(0);
    expect(await givenUpForBudget()).toBe(0);
  });

  it("sends a caller's first two emails of the hour and fails the third unsent, saying why; another caller's two still go", async () => {
    const alices = [
      await emailNotification("alice", "desk-1@alice.example"),
      await emailNotification("alice", "desk-2@alice.example"),
      await emailNotification("alice", "desk-3@alice.example"),
    ];
    const bobs = [await emailNotification("bob", "desk-1@bob.example"), await emailNotification("bob", "desk-2@bob.example")];

    const rows = await Promise.all(alices.map(({ id }) => waitForNotification(t, id, isFinished)));
    expect(rows.map((row) => row.status).sort()).toEqual(["delivered", "delivered", "failed"]);
    heldBack = alices[rows.findIndex((row) => row.status === "failed")]!;
    // Alice over her budget takes nothing of bob's: both of his go, his budget untouched.
    for (const { id } of bobs) expect(await status(id)).toBe("delivered");

    // The two within the budget reached the SMTP server, the third did not.
    expect(alices.map(({ to }) => sentTo(to)).sort()).toEqual([0, 1, 1]);
    expect(sentTo(heldBack.to)).toBe(0);
    expect(bobs.map(({ to }) => sentTo(to))).toEqual([1, 1]);
    const [attempt, ...more] = await attemptsOf(t, heldBack.id);
    expect(more).toEqual([]);
    expect(attempt!.statusCode).toBeNull();
    expect(attempt!.error).toMatch(
      new RegExp(
        `^not sent: its alert owner has used up this hour's emails \\(2 an hour per caller, EMAIL_PER_CALLER_PER_HOUR\\); ` +
          `its owner can send it again from \\S+:00:00\\.000Z with POST /v1/notifications/${heldBack.id}/redeliver$`,
      ),
    );
    // Not the mailbox's fault: no run of failures starts for its alert.
    expect((await alertRow(t, heldBack.alert.alertId)).failingSince).toBeNull();

    await waitFor("the refusal counted", async () => (await sample("email_budget_refusals_total")) === 1);
    expect(await givenUpForBudget()).toBe(1);
    expect(await emailAttempts("failed")).toBe(1);
    expect(await emailAttempts("delivered")).toBe(4);
    const warnings = budgetWarnings("alice");
    expect(warnings.map((entry) => entry.level)).toEqual([40]);
    expect(warnings[0]!.emailPerCallerPerHour).toBe(2);
    expect(budgetWarnings("bob")).toEqual([]);
  });

  it("warns once a minute per caller however many of its emails are held back, the repeats at debug", async () => {
    const more = [await emailNotification("alice", "desk-4@alice.example"), await emailNotification("alice", "desk-5@alice.example")];
    for (const { id } of more) expect(await status(id)).toBe("failed");
    expect(more.map(({ to }) => sentTo(to))).toEqual([0, 0]);
    expect(budgetWarnings("alice").map((entry) => entry.level)).toEqual([40, 20, 20]);
    await waitFor("the refusals counted", async () => (await sample("email_budget_refusals_total")) === 3);
  });

  it("counts an email once, not once per attempt: one retried after the SMTP server's 451 leaves room for another", async () => {
    const busy = "desk-1@carol.example";
    smtp.rejectRecipient(busy, 451);
    const retried = await emailNotification("carol", busy);
    await waitForNotification(t, retried.id, (row) => row.attemptCount >= 1);
    const second = await emailNotification("carol", "desk-2@carol.example");
    expect(await status(second.id)).toBe("delivered");
    const retriedRow = await waitForNotification(t, retried.id, isFinished);
    expect(retriedRow.status).toBe("delivered");
    expect((await attemptsOf(t, retried.id)).map((attempt) => attempt.statusCode)).toEqual([451, 250]);

    const third = await emailNotification("carol", "desk-3@carol.example");
    expect(await status(third.id)).toBe("failed");
    expect(sentTo(third.to)).toBe(0);
  });

  it("counts a redelivery again: an email its mailbox refused, redelivered, takes the room of another", async () => {
    const refusing = "desk-1@dave.example";
    smtp.rejectRecipient(refusing, 550, "5.1.1 User unknown");
    const refused = await emailNotification("dave", refusing);
    expect(await status(refused.id)).toBe("failed");
    expect((await redeliver("dave", refused.id)).statusCode).toBe(202);
    expect((await waitForNotification(t, refused.id, (row) => row.status === "delivered")).status).toBe("delivered");
    expect(sentTo(refusing)).toBe(1);

    // One notification, two sends: dave's hour is spent.
    const next = await emailNotification("dave", "desk-2@dave.example");
    expect(await status(next.id)).toBe("failed");
    expect(sentTo(next.to)).toBe(0);
  });

  it("starts each caller's budget afresh when the hour turns: a held-back email redelivered, and another, are sent", async () => {
    expect(sentTo(heldBack.to)).toBe(0);
    rig.setHoursAhead(1);
    expect((await redeliver("alice", heldBack.id)).statusCode).toBe(202);
    expect((await waitForNotification(t, heldBack.id, (row) => row.status === "delivered")).status).toBe("delivered");
    expect(sentTo(heldBack.to)).toBe(1);

    // The redelivery was the hour's first; this is its second, and the third is over again.
    const second = await emailNotification("alice", "desk-6@alice.example");
    expect(await status(second.id)).toBe("delivered");
    const third = await emailNotification("alice", "desk-7@alice.example");
    expect(await status(third.id)).toBe("failed");
    expect(sentTo(third.to)).toBe(0);
  });
});
