// A burst of webhooks to a receiver that answers quickly, after a quiet spell with nothing to
// send to it, goes out at once (notify/host-slots.ts: silence is counted only while attempts are
// in flight). Counted from the receiver's last answer, the quiet spell read as a receiver that
// hangs as soon as the burst filled its slots: jobs stepped aside for at least as long as the
// quiet spell, up to 5 minutes (an operator saw 240 of 580 webhooks to a receiver answering in
// 1 ms held back for 100 s to 5 minutes after a PostgreSQL stall). Real peers: a loopback
// receiver, a real BullMQ worker running our delivery processor, PostgreSQL and Redis. The quiet
// spell is real time, just over the 5 s that counts as slow (deliver.ts SLOW_ATTEMPT_MS): the
// processor's clock also sets BullMQ's due times, so it cannot be moved ahead.
import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Worker } from "bullmq";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createChannels, type Channels } from "../../src/notify/channels/index.ts";
import { enqueueDeliveries } from "../../src/queue/deliveries.ts";
import { makeDeliverProcessor } from "../../src/queue/jobs/deliver.ts";
import { DELIVERY_QUEUE, type DeliverJob } from "../../src/queue/names.ts";
import { createWorkerRedis } from "../../src/redis.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { attemptsOf, isFinished, seedAlert, seedNotification, waitForNotification } from "../helpers/delivery.ts";

/** A receiver's slots per caller (its floor); the caller's receivers not known to answer quickly hold twice as many together. */
const SLOTS = 2;
/** Worker slots: room for the whole burst at once. */
const CONCURRENCY = 10;
/** The receiver answers in this long: quick, but long enough for the burst to fill the slots before the first answer. */
const ANSWER_MS = 200;
/** Nothing sent to the receiver for this long: past the 5 s after which an attempt in flight counts as slow. */
const QUIET_MS = 6_000;
/** Well under the quiet spell: the burst went out at once, give or take one ~1 s step aside. */
const PROMPT_MS = 4_000;

let t: TestApp;
let channels: Channels;
let worker: Worker<DeliverJob>;
let receiver: Server;
let receiverUrl: string;

beforeAll(async () => {
  // A failed attempt is retried an hour later: each notification gets one attempt within the test.
  t = await startTestApp("receiver-quiet-spell", { RETRY_SCHEDULE: "1h" });
  receiver = createServer((req, res) => {
    req.resume();
    req.on("end", () => setTimeout(() => res.end("ok"), ANSWER_MS));
  });
  receiver.listen(0, "127.0.0.1");
  await once(receiver, "listening");
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  channels = createChannels(t.config, t.deps.logger);
  const deliver = makeDeliverProcessor({ ...t.deps, channels, webhookAttemptsPerReceiver: SLOTS }, "webhook");
  worker = new Worker<DeliverJob>(DELIVERY_QUEUE.webhook, deliver, {
    connection: createWorkerRedis(t.config.redisUrl),
    prefix: t.config.queuePrefix,
    concurrency: CONCURRENCY,
  });
  worker.on("error", (error) => console.error("delivery worker error:", error));
});
afterAll(async () => {
  await worker?.close();
  await channels?.close();
  await t?.deps.queues[DELIVERY_QUEUE.webhook].obliterate({ force: true });
  receiver?.closeAllConnections();
  await new Promise((resolve) => receiver?.close(resolve));
  await t?.close();
});

/**
 * `warmUp` notifications of a new alert of `owner`, delivered one after another (each quick
 * answer grows the owner's cap at the receiver by one), then nothing for QUIET_MS, then `burst`
 * all enqueued at once: how long after their release each of the burst's attempts was made.
 */
async function burstAfterQuiet(owner: string, warmUp: number, burst: number): Promise<number[]> {
  const alert = await seedAlert(t, { method: "webhook", webhookUrl: receiverUrl, owner });
  for (let i = 0; i < warmUp; i++) {
    const id = await seedNotification(t, alert, "webhook", receiverUrl);
    expect((await waitForNotification(t, id, isFinished)).status).toBe("delivered");
  }
  await new Promise((resolve) => setTimeout(resolve, QUIET_MS));

  const ids: string[] = [];
  for (let i = 0; i < burst; i++) ids.push(await seedNotification(t, alert, "webhook", receiverUrl, { enqueue: false }));
  const releasedAt = Date.now();
  await enqueueDeliveries(t.deps.queues, ids.map((notificationId) => ({ notificationId, channel: "webhook" as const })));
  const waits = [];
  for (const id of ids) {
    expect((await waitForNotification(t, id, isFinished, 20_000)).status).toBe("delivered");
    const [attempt] = await attemptsOf(t, id);
    waits.push(attempt!.at.getTime() - releasedAt);
  }
  return waits;
}

describe("a burst to a receiver that answers quickly, after a quiet spell", { timeout: 60_000 }, () => {
  it("goes out at once when it fills the receiver's cap: no job waits out the quiet spell", async () => {
    // One quick answer: a cap of 3, under the owner's bound of 4 on receivers not known to be quick.
    const waits = await burstAfterQuiet("quiet-cap", 1, CONCURRENCY);
    expect(Math.max(...waits)).toBeLessThan(PROMPT_MS);
  });

  it("goes out at once when its cap is over the owner's bound on slow receivers: the receiver is not held to that bound", async () => {
    // Four quick answers: a cap of 6, over the bound of 4.
    const waits = await burstAfterQuiet("quiet-bound", 4, CONCURRENCY);
    expect(Math.max(...waits)).toBeLessThan(PROMPT_MS);
  });
});
