// SMS_PER_CALLER_PER_HOUR: firings are not capped and anyone can make a public address fire with
// dust, so one caller's SMS alerts could send thousands of texts an hour at the operator's cost.
// Past its budget a caller's SMS fail unsent, saying why, without counting against their alerts,
// and its owner can redeliver them once the hour has turned. Other callers' SMS go on.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestApp } from "../helpers/app.ts";
import { alertRow, attemptsOf, isFinished, seedAlert, seedNotification, waitForNotification } from "../helpers/delivery.ts";
import { startHourlyBudgetRig, type HourlyBudgetRig } from "../helpers/hourly-budget-rig.ts";
import { bearer } from "../helpers/seed.ts";
import { startTwilioStandin, twilioSettings, type TwilioStandin } from "../helpers/twilio-standin.ts";
import { waitFor } from "../helpers/wait.ts";

let t: TestApp;
let rig: HourlyBudgetRig;
let standin: TwilioStandin;

beforeAll(async () => {
  standin = await startTwilioStandin();
  rig = await startHourlyBudgetRig(
    "sms-budget",
    { ...twilioSettings(standin.baseUrl), SMS_PER_CALLER_PER_HOUR: "2", RETRY_SCHEDULE: "300ms,300ms,300ms" },
    { smsTimeoutMs: 5_000 },
  );
  t = rig.t;
});
afterAll(async () => {
  await rig?.close();
  await standin?.close();
});

const sample = (name: string) => rig.sample(name);
const smsAttempts = async (outcome: string) => sample(`delivery_attempts_total\\{channel="sms",outcome="${outcome}"\\}`);
const sentTo = (to: string) => standin.messages().filter((message) => message.to === to).length;
const budgetWarnings = (owner: string) =>
  rig.lines.map((line) => JSON.parse(line) as { level: number; msg: string; owner?: string }).filter((entry) => entry.owner === owner && entry.msg.includes("SMS_PER_CALLER_PER_HOUR"));

/** An SMS alert of `owner`'s to `to` and one notification of it, enqueued. */
async function smsNotification(owner: string, to: string) {
  const alert = await seedAlert(t, { method: "sms", recipient: to, owner });
  return { alert, to, id: await seedNotification(t, alert, "sms", to) };
}

describe("the SMS budget per caller and clock hour", () => {
  let heldBack: Awaited<ReturnType<typeof smsNotification>>;

  it("starts its refusal counter at zero", async () => {
    expect(await sample("sms_budget_refusals_total")).toBe(0);
  });

  it("sends a caller's first two SMS of the hour and fails the third unsent, saying why; another caller's SMS still go", async () => {
    const alices = [
      await smsNotification("alice", "+14155550301"),
      await smsNotification("alice", "+14155550302"),
      await smsNotification("alice", "+14155550303"),
    ];
    const bobs = await smsNotification("bob", "+14155550304");

    const rows = await Promise.all(alices.map(({ id }) => waitForNotification(t, id, isFinished)));
    expect(rows.map((row) => row.status).sort()).toEqual(["delivered", "delivered", "failed"]);
    heldBack = alices[rows.findIndex((row) => row.status === "failed")]!;
    expect((await waitForNotification(t, bobs.id, isFinished)).status).toBe("delivered");

    // The two within the budget reached Twilio, the third did not.
    expect(alices.map(({ to }) => sentTo(to)).sort()).toEqual([0, 1, 1]);
    expect(sentTo(heldBack.to)).toBe(0);
    expect(sentTo(bobs.to)).toBe(1);
    const [attempt, ...more] = await attemptsOf(t, heldBack.id);
    expect(more).toEqual([]);
    expect(attempt!.statusCode).toBeNull();
    expect(attempt!.error).toMatch(
      new RegExp(
        `^not sent: its alert owner has used up this hour's SMS \\(2 an hour per caller, SMS_PER_CALLER_PER_HOUR\\); ` +
          `its owner can send it again from \\S+:00:00\\.000Z with POST /v1/notifications/${heldBack.id}/redeliver$`,
      ),
    );
    // Not the number's fault: no run of failures starts for its alert.
    expect((await alertRow(t, heldBack.alert.alertId)).failingSince).toBeNull();

    await waitFor("the refusal counted", async () => (await sample("sms_budget_refusals_total")) === 1);
    expect(await smsAttempts("failed")).toBe(1);
    expect(await smsAttempts("delivered")).toBe(3);
    expect(budgetWarnings("alice").map((entry) => entry.level)).toEqual([40]);
    expect(budgetWarnings("bob")).toEqual([]);
  });

  it("warns once a minute per caller however many of its SMS are held back, the repeats at debug", async () => {
    const more = [await smsNotification("alice", "+14155550305"), await smsNotification("alice", "+14155550306")];
    for (const { id } of more) expect((await waitForNotification(t, id, isFinished)).status).toBe("failed");
    expect(more.map(({ to }) => sentTo(to))).toEqual([0, 0]);
    expect(budgetWarnings("alice").map((entry) => entry.level)).toEqual([40, 20, 20]);
    await waitFor("the refusals counted", async () => (await sample("sms_budget_refusals_total")) === 3);
  });

  it("counts an SMS once, not once per attempt: one retried after Twilio was busy leaves room for another", async () => {
    const busy = "+14155550311";
    standin.refuseRecipient(busy, { status: 503, code: 20503, message: "Service Unavailable" });
    const retried = await smsNotification("carol", busy);
    await waitForNotification(t, retried.id, (row) => row.attemptCount >= 1);
    const second = await smsNotification("carol", "+14155550312");
    expect((await waitForNotification(t, second.id, isFinished)).status).toBe("delivered");
    standin.acceptRecipient(busy);
    const retriedRow = await waitForNotification(t, retried.id, isFinished);
    expect(retriedRow.status).toBe("delivered");
    expect(retriedRow.attemptCount).toBeGreaterThanOrEqual(2);

    const third = await smsNotification("carol", "+14155550313");
    expect((await waitForNotification(t, third.id, isFinished)).status).toBe("failed");
    expect(sentTo(third.to)).toBe(0);
  });

  it("sends a held-back SMS when its owner redelivers it in the next hour", async () => {
    expect(sentTo(heldBack.to)).toBe(0);
    rig.setHoursAhead(1);
    const answer = await t.app.inject({ method: "POST", url: `/v1/notifications/${heldBack.id}/redeliver`, headers: bearer(await t.token("alice")) });
    expect(answer.statusCode).toBe(202);
    expect((await waitForNotification(t, heldBack.id, (row) => row.status === "delivered")).status).toBe("delivered");
    expect(sentTo(heldBack.to)).toBe(1);
  });
});
