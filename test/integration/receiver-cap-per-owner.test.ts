// The per-receiver cap (notify/host-slots.ts) is each caller's own: another caller's endpoint
// that hangs, under the same registrable domain or address (another port, another subdomain),
// must not hold up this caller's webhooks; nor may one caller's many hanging receivers take
// every worker slot. Real peers: loopback receivers (one address, two ports, is one receiver),
// a real BullMQ worker running our delivery processor, PostgreSQL and Redis.
import { Worker, type Job } from "bullmq";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createChannels, type Channels } from "../../src/notify/channels/index.ts";
import { makeDeliverProcessor } from "../../src/queue/jobs/deliver.ts";
import { DELIVERY_QUEUE, type DeliverJob } from "../../src/queue/names.ts";
import { createWorkerRedis } from "../../src/redis.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { attemptsOf, isFinished, seedAlert, seedNotification, waitForNotification, type SeededAlert } from "../helpers/delivery.ts";
import { waitFor } from "../helpers/wait.ts";
import { startWebhookReceiver, type WebhookReceiver } from "../helpers/webhook-receiver.ts";

/** A receiver's slots per caller (its floor); the caller's hanging receivers hold twice as many together. */
const SLOTS = 2;
/** Worker slots: more than any one caller's hanging receivers may hold, fewer than they would without that bound. */
const CONCURRENCY = 10;
/** The attempt timeout: what a job held up behind a hanging receiver waits, at least. */
const TIMEOUT_MS = 3_000;
/** Well under the timeout: a delivery that went out at once, not after someone else's timeout. */
const PROMPT_MS = 1_000;

let t: TestApp;
let channels: Channels;
let worker: Worker<DeliverJob>;
const receivers: WebhookReceiver[] = [];
/** Runs of each notification's job, as the worker started them. */
const runs = new Map<string, number>();

beforeAll(async () => {
  // A timed-out attempt is retried an hour later: each notification gets one attempt at most.
  t = await startTestApp("receiver-cap-per-owner", { RETRY_SCHEDULE: "1h" });
  channels = createChannels(t.config, t.deps.logger, { webhookTimeoutMs: TIMEOUT_MS });
  const deliver = makeDeliverProcessor({ ...t.deps, channels, webhookAttemptsPerReceiver: SLOTS }, "webhook");
  worker = new Worker<DeliverJob>(
    DELIVERY_QUEUE.webhook,
    (job: Job<DeliverJob>, token?: string) => {
      runs.set(job.data.notificationId, (runs.get(job.data.notificationId) ?? 0) + 1);
      return deliver(job, token);
    },
    { connection: createWorkerRedis(t.config.redisUrl), prefix: t.config.queuePrefix, concurrency: CONCURRENCY },
  );
  worker.on("error", (error) => console.error("delivery worker error:", error));
});
afterAll(async () => {
  await Promise.all(receivers.map((receiver) => receiver.close())); // ends the hung attempts, so the worker can stop
  await worker?.close();
  await channels?.close();
  await t?.deps.queues[DELIVERY_QUEUE.webhook].obliterate({ force: true });
  await t?.close();
});

async function receiverAt(host: string): Promise<WebhookReceiver> {
  const receiver = await startWebhookReceiver({ host });
  receivers.push(receiver);
  return receiver;
}

/** `count` notifications of a new alert of `owner` to a route that never answers. */
async function hangingBacklog(receiver: WebhookReceiver, owner: string, count: number): Promise<SeededAlert> {
  const route = receiver.route(`/hang-${owner}`).respond(...Array.from({ length: count }, () => ({ hang: true as const })));
  const alert = await seedAlert(t, { method: "webhook", webhookUrl: route.url, owner });
  for (let i = 0; i < count; i++) await seedNotification(t, alert, "webhook", route.url);
  return alert;
}

async function attemptsAt(alertIds: readonly string[]): Promise<number> {
  const [row] = await t.deps.sql<Array<{ attempts: number }>>`
    select count(*)::int as attempts from delivery_attempts a join notifications n on n.id = a.notification_id
    where n.alert_id = any(${alertIds as string[]}::text[])`;
  return row!.attempts;
}

/**
 * Sends `count` notifications of `owner` to a receiver that answers at once, and returns how
 * long each waited for its attempt (from the row's creation) and how many runs its job took.
 */
async function promptDeliveries(receiver: WebhookReceiver, owner: string, count: number): Promise<Array<{ waitedMs: number; runs: number }>> {
  const route = receiver.route(`/fine-${owner}`);
  const alert = await seedAlert(t, { method: "webhook", webhookUrl: route.url, owner });
  route.verifyWith(alert.secret!);
  const ids: string[] = [];
  for (let i = 0; i < count; i++) ids.push(await seedNotification(t, alert, "webhook", route.url));
  const outcomes = [];
  for (const id of ids) {
    const row = await waitForNotification(t, id, isFinished, 4 * TIMEOUT_MS);
    expect(row.status).toBe("delivered");
    const [attempt] = await attemptsOf(t, id);
    outcomes.push({ waitedMs: attempt!.at.getTime() - row.createdAt.getTime(), runs: runs.get(id) ?? 0 });
  }
  expect(route.requests.map((request) => request.verifiedWith)).toEqual(ids.map(() => [alert.secret]));
  return outcomes;
}

describe("another caller's hanging endpoint at the same receiver", { timeout: 60_000 }, () => {
  it("does not hold up this caller's webhooks to another port of that address", async () => {
    // One address, two ports: one receiver as receiverOf counts it.
    const [hanging, answering] = await Promise.all([receiverAt("127.0.0.1"), receiverAt("127.0.0.1")]);
    const other = await hangingBacklog(hanging, "mallory", 3 * SLOTS);
    // One round of timeouts first: by then the worker knows that endpoint hangs, and its next
    // round is in flight, holding the slots it may use.
    await waitFor("a round of timeouts at the hanging port", async () => (await attemptsAt([other.alertId])) >= SLOTS, 4 * TIMEOUT_MS);
    await waitFor("the next round in flight", async () => hanging.all.length >= 2 * SLOTS, 4 * TIMEOUT_MS);

    const outcomes = await promptDeliveries(answering, "alice", 3);
    // Shared with mallory, the cap sent each of these aside for at least the timeout.
    for (const outcome of outcomes) {
      expect(outcome.runs).toBe(1);
      expect(outcome.waitedMs).toBeLessThan(PROMPT_MS);
    }
  });
});

describe("one caller's many hanging receivers", { timeout: 60_000 }, () => {
  it("hold only their bounded share of the worker's slots: another caller's webhook goes out at once", async () => {
    // Six addresses, six receivers: at SLOTS each they would want 12 slots, more than the worker's 10.
    const hangingAt = await Promise.all(["127.0.0.11", "127.0.0.12", "127.0.0.13", "127.0.0.14", "127.0.0.15", "127.0.0.16"].map(receiverAt));
    for (const receiver of hangingAt) await hangingBacklog(receiver, "trudy", SLOTS);
    // Their first attempts are in flight (each stays there for the timeout).
    const trudys = () => hangingAt.flatMap((receiver) => receiver.all);
    await waitFor("trudy's first attempts in flight", async () => trudys().length >= 2 * SLOTS, 4 * TIMEOUT_MS);

    const answering = await receiverAt("127.0.0.21");
    const [outcome] = await promptDeliveries(answering, "bob", 1);
    expect(outcome!.runs).toBe(1);
    expect(outcome!.waitedMs).toBeLessThan(PROMPT_MS);
    // Trudy's receivers together held no more than twice a receiver's floor at once: the
    // requests they got before any of them could have timed out were all in flight together.
    const first = Math.min(...trudys().map((request) => request.receivedAt));
    expect(trudys().filter((request) => request.receivedAt < first + TIMEOUT_MS / 2)).toHaveLength(2 * SLOTS);
  });
});
