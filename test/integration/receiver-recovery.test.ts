// A receiver that answers slowly for a spell, then quickly again. While it is slow, the jobs over
// its cap step aside for as long as the line before them takes at its slow pace (one attempt
// over its slots each: here 5-8 s a job, a minute and more for the last ones). Its first quick
// answer calls them back (notify/host-slots.ts give, queue/wake-stepped-aside.ts); kept, those
// delays held the older notifications back minutes after it had recovered, while newer ones went
// out at once (an operator saw up to 6 minutes after a 30 s spell of 8 s answers). Real peers: a
// loopback receiver, a real BullMQ worker running our delivery processor, PostgreSQL and Redis;
// the slow spell is real time (an 8 s answer: past the 5 s that counts as slow, deliver.ts
// SLOW_ATTEMPT_MS), since the processor's clock also sets BullMQ's due times.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { enqueueDeliveries } from "../../src/queue/deliveries.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { attemptsOf, isFinished, seedAlert, seedNotification, startDeliveryWorkers, waitForNotification, type DeliveryWorkers } from "../helpers/delivery.ts";
import { startWebhookReceiver, type WebhookReceiver } from "../helpers/webhook-receiver.ts";

/** The receiver's slots (its floor): one attempt at a time while it is slow. */
const SLOTS = 1;
const BACKLOG = 12;
const SLOW_ANSWER_MS = 8_000;
/**
 * Every notification delivered within this long of its release. The first of the line comes
 * back about 15 s in (its place reckoned at the slow pace), and its quick answer calls the rest
 * back at once; left to their delays, the last of them came back a minute and more later.
 */
const RECOVERED_WITHIN_MS = 25_000;

let t: TestApp;
let receiver: WebhookReceiver;
let workers: DeliveryWorkers;

beforeAll(async () => {
  t = await startTestApp("receiver-recovery", { RETRY_SCHEDULE: "1h" });
  receiver = await startWebhookReceiver();
  workers = startDeliveryWorkers(t, {}, { webhookAttemptsPerReceiver: SLOTS }, BACKLOG);
});
afterAll(async () => {
  await workers?.close();
  await receiver?.close();
  await t?.close();
});

describe("a receiver that answers quickly again after a slow spell", { timeout: 60_000 }, () => {
  it("gets the notifications that stepped aside while it was slow at its first quick answer, not after the delays reckoned at its slow pace", async () => {
    // The first attempt is answered in 8 s, every later one at once.
    const route = receiver.route("/recovering").respond({ status: 200, body: "ok", afterMs: SLOW_ANSWER_MS });
    const alert = await seedAlert(t, { method: "webhook", webhookUrl: route.url });
    const ids: string[] = [];
    for (let i = 0; i < BACKLOG; i++) ids.push(await seedNotification(t, alert, "webhook", route.url, { enqueue: false }));
    const releasedAt = Date.now();
    await enqueueDeliveries(t.deps.queues, ids.map((notificationId) => ({ notificationId, channel: "webhook" as const })));

    const deliveredAt: number[] = [];
    for (const id of ids) {
      expect((await waitForNotification(t, id, isFinished, RECOVERED_WITHIN_MS)).status).toBe("delivered");
      const attempts = await attemptsOf(t, id);
      expect(attempts).toHaveLength(1);
      deliveredAt.push(attempts[0]!.at.getTime() - releasedAt);
    }
    // The spell was slow indeed: the jobs over the cap waited out the first attempt's 8 s.
    expect(deliveredAt.filter((at) => at >= SLOW_ANSWER_MS)).toHaveLength(BACKLOG - 1);
    expect(Math.max(...deliveredAt)).toBeLessThan(RECOVERED_WITHIN_MS);
  });
});
