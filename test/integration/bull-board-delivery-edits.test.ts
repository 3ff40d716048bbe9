// Bull Board's "Update Data" and "Reschedule job" on the delivery queues. A delivery job's data
// is its notification's id: pointed at another notification, it sends that one (twice, beside
// that notification's own job) while its own waits for the reconciler. Its schedule is the
// notification row's. Both are refused there, as Retry and "Add job" are (admin.test.ts); the
// other queues keep them.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DELIVERY_QUEUE, QUEUES } from "../../src/queue/names.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";

const AUTH = `Basic ${Buffer.from("ops:correct-horse-battery").toString("base64")}`;
const HOUR = 3_600_000;

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp("bull-board-delivery-edits", { ADMIN_USER: "ops", ADMIN_PASSWORD: "correct-horse-battery" });
});
afterAll(async () => {
  await t.close();
});

const patch = (url: string, payload: object) => t.app.inject({ method: "PATCH", url, headers: { authorization: AUTH }, payload });

describe("editing a delivery job from Bull Board", () => {
  it("refuses Update Data on every delivery queue, leaving the job's notification id as it was", async () => {
    for (const queueName of Object.values(DELIVERY_QUEUE)) {
      const queue = t.deps.queues[queueName];
      // Parked for its next attempt, as a retrying notification's job is.
      await queue.add("deliver", { notificationId: "ntf_A" }, { jobId: "ntf_A", delay: HOUR });
      try {
        const res = await patch(`/admin/queues/api/queues/${queueName}/ntf_A/update-data`, { jobData: { notificationId: "ntf_B" } });
        expect(res.statusCode, res.body).toBe(403);
        expect(res.headers["content-type"]).toContain("application/problem+json");
        expect(res.json()).toMatchObject({
          code: "forbidden",
          detail: expect.stringMatching(new RegExp(`^the data of ${queueName}'s jobs is not edited by hand: a delivery job's data is its notification's id`)),
        });
        expect((await queue.getJob("ntf_A"))?.data).toEqual({ notificationId: "ntf_A" });
      } finally {
        await queue.remove("ntf_A");
      }
    }
    // The other queues keep it: a risk job's data is its work, not a pointer to a notification.
    const risk = t.deps.queues[QUEUES.risk];
    await risk.add("evaluate", { scoreChangeIds: [1] }, { jobId: "risk_edited", delay: HOUR });
    try {
      const res = await patch(`/admin/queues/api/queues/${QUEUES.risk}/risk_edited/update-data`, { jobData: { scoreChangeIds: [2] } });
      expect(res.statusCode, res.body).toBe(200);
      expect((await risk.getJob("risk_edited"))?.data).toEqual({ scoreChangeIds: [2] });
    } finally {
      await risk.remove("risk_edited");
    }
  });

  it("refuses Reschedule on a delivery job, which keeps its run time", async () => {
    const queue = t.deps.queues[QUEUES.deliverWebhook];
    await queue.add("deliver", { notificationId: "ntf_C" }, { jobId: "ntf_C", delay: HOUR });
    try {
      const { delay, timestamp } = (await queue.getJob("ntf_C"))!;
      const res = await patch(`/admin/queues/api/queues/${QUEUES.deliverWebhook}/ntf_C/delay`, { runAt: Date.now() + 24 * HOUR });
      expect(res.statusCode, res.body).toBe(403);
      expect(res.json<{ detail: string }>().detail).toMatch(/^jobs of deliver-webhook are not rescheduled by hand: a delivery's schedule is its notification's next attempt/);
      const after = (await queue.getJob("ntf_C"))!;
      expect([after.delay, after.timestamp]).toEqual([delay, timestamp]);
      expect(await queue.getJobState("ntf_C")).toBe("delayed");
    } finally {
      await queue.remove("ntf_C");
    }
  });
});
