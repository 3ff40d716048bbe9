// Fairness between callers on a delivery queue, with real PostgreSQL, Redis, BullMQ workers and
// an SMTP peer: one caller's storm of email alerts must not hold another caller's one alert
// behind it. Each test queues everything first and only then starts the workers, so the order
// in which the peer receives the messages is the queue's order, not a race with the enqueue.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { storeTransactionBatch } from "../../src/ingest/store.ts";
import { newId } from "../../src/ids.ts";
import { evaluateBatch } from "../../src/pipeline/evaluate-batch.ts";
import { runReconcileOnce } from "../../src/pipeline/reconcile.ts";
import { enqueueDeliveries } from "../../src/queue/deliveries.ts";
import { IN_ORDER_PER_OWNER } from "../../src/queue/delivery-priority.ts";
import { QUEUES } from "../../src/queue/names.ts";
import type { Transaction } from "../../src/domain/types.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { randomAddress } from "../helpers/chain.ts";
import { samplePayload, startDeliveryWorkers } from "../helpers/delivery.ts";
import { makeTransaction } from "../helpers/seed.ts";
import { startSmtpPeer, type SmtpPeer } from "../helpers/smtp-peer.ts";
import { waitFor } from "../helpers/wait.ts";

// The app's clock starts a second into a minute: a caller's burst is counted per minute, and no
// test here may straddle a minute of real time (each takes a few seconds).
const started = Date.now();
const anchor = Math.floor(started / 60_000) * 60_000 + 1_000;
const clock = () => anchor + (Date.now() - started);

let t: TestApp;
let smtp: SmtpPeer;
let run = 0;

beforeAll(async () => {
  smtp = await startSmtpPeer();
  t = await startTestApp(
    "delivery-fairness",
    { SMTP_URL: smtp.url, EMAIL_FROM: "Wallet Alerts <alerts@wallet-alerts.test>" },
    { now: () => new Date(clock()) },
  );
});
afterAll(async () => {
  await smtp?.close();
  await t?.close();
});

const STORM = 300;
/**
 * Where the quiet caller's email may arrive at the latest: after the storm's first
 * IN_ORDER_PER_OWNER, plus those the email worker (5 at a time) had in hand when it took it.
 * In arrival order it would be the 301st.
 */
const EARLY_ENOUGH = IN_ORDER_PER_OWNER + 10;

type Caller = { owner: string; recipient: string; alerts: Array<{ alertId: string; address: string }> };

/** `count` tracked wallets of a fresh caller, each with an email alert on any transfer above 1. */
async function seedCaller(name: string, count: number): Promise<Caller> {
  const owner = `${name}-${++run}`;
  const recipient = `${owner}@example.com`;
  const alerts = Array.from({ length: count }, () => ({ alertId: newId("alr"), address: randomAddress(), walletId: newId("wal") }));
  await t.deps.sql`
    insert into tracked_wallets (id, owner, address)
    select id, ${owner}, address from unnest(${alerts.map((a) => a.walletId)}::text[], ${alerts.map((a) => a.address)}::text[]) as u(id, address)`;
  await t.deps.sql`
    insert into alerts (id, owner, wallet_id, condition, threshold, notification_method, recipient)
    select id, ${owner}, wallet_id, 'large_transfer', 1, 'email', ${recipient}
    from unnest(${alerts.map((a) => a.alertId)}::text[], ${alerts.map((a) => a.walletId)}::text[]) as u(id, wallet_id)`;
  return { owner, recipient, alerts };
}

/** A transfer out of each of the caller's wallets, stored as one batch and evaluated: one enqueue. */
async function fireAll(caller: Pick<Caller, "alerts">): Promise<void> {
  const txs: Transaction[] = caller.alerts.map((alert) =>
    makeTransaction({ from: alert.address, to: randomAddress(), amount: 5, blockTime: Math.floor(clock() / 1000) }),
  );
  const { batchId } = await storeTransactionBatch(t.deps, txs);
  const outcome = await evaluateBatch(t.deps, batchId!);
  expect(outcome).toMatchObject({ status: "evaluated", notifications: caller.alerts.length });
}

/** Starts the delivery workers, waits until the peer has `total` more messages, and returns their recipients in the order received. */
async function deliverAll(total: number): Promise<string[]> {
  const before = smtp.messages.length;
  const workers = startDeliveryWorkers(t, { smtpTimeoutMs: 5_000 });
  try {
    await waitFor(`${total} emails at the SMTP peer`, async () => smtp.messages.length - before >= total, 60_000);
  } finally {
    await workers.close();
  }
  return smtp.messages.slice(before).map((mail) => mail.to.join(","));
}

describe("delivery fairness between callers", () => {
  it("delivers another caller's alert among the first emails when a storm of one caller's alerts fired just before it", async () => {
    const storm = await seedCaller("storm", STORM);
    const quiet = await seedCaller("desk", 1);
    await fireAll(storm);
    await fireAll(quiet);

    const order = await deliverAll(STORM + 1);
    expect(order.filter((to) => to === storm.recipient)).toHaveLength(STORM);
    expect(order.indexOf(quiet.recipient)).toBeGreaterThanOrEqual(0);
    expect(order.indexOf(quiet.recipient)).toBeLessThan(EARLY_ENOUGH);
  });

  it("ranks a storm that came over many evaluations as one: another caller's alert still goes among the first", async () => {
    const storm = await seedCaller("spread", STORM);
    const quiet = await seedCaller("desk", 1);
    // 15 evaluations of 20 firings each: within any one of them, the caller never passes its first 20.
    for (let i = 0; i < STORM; i += IN_ORDER_PER_OWNER) await fireAll({ alerts: storm.alerts.slice(i, i + IN_ORDER_PER_OWNER) });
    await fireAll(quiet);

    const order = await deliverAll(STORM + 1);
    expect(order.indexOf(quiet.recipient)).toBeLessThan(EARLY_ENOUGH);
  });

  it("ranks the reconciler's re-enqueue in the owners' bursts: after Redis lost the jobs, the storm's owed emails do not hold back another caller's", async () => {
    const storm = await seedCaller("owed", STORM);
    const quiet = await seedCaller("desk", 1);
    // Open notifications without jobs (as a Redis flush leaves them), the quiet caller's newest:
    // the sweep reads them oldest first.
    const rows = [...storm.alerts.map((alert) => ({ alert, to: storm.recipient })), { alert: quiet.alerts[0]!, to: quiet.recipient }];
    const at = new Date(clock());
    const ids = rows.map(() => newId("ntf", at.getTime()));
    await t.deps.sql`
      insert into notifications (id, alert_id, channel, destination, payload, status, created_at, updated_at)
      select id, alert_id, 'email', destination, payload::jsonb, 'pending', ${at.toISOString()}::timestamptz, ${at.toISOString()}::timestamptz
      from unnest(${ids}::text[], ${rows.map((r) => r.alert.alertId)}::text[], ${rows.map((r) => r.to)}::text[],
                  ${rows.map((r) => JSON.stringify(samplePayload({ ...r.alert, walletId: "wal_x" })))}::text[]) as u(id, alert_id, destination, payload)`;

    const swept = await runReconcileOnce({ ...t.deps, now: () => new Date(clock() + 1_000) }, { graceMs: 0 });
    expect(swept.notifications).toBe(STORM + 1);

    const order = await deliverAll(STORM + 1);
    expect(order.indexOf(quiet.recipient)).toBeLessThan(EARLY_ENOUGH);
  });

  it("adds a notification enqueued twice once, keeping the priority of its first enqueue", async () => {
    const storm = await seedCaller("twice", 1);
    const queue = t.deps.queues[QUEUES.deliverEmail];
    const items = Array.from({ length: IN_ORDER_PER_OWNER + 5 }, () => ({
      notificationId: newId("ntf", clock()),
      channel: "email" as const,
      owner: storm.owner,
    }));
    try {
      await enqueueDeliveries(t.deps.queues, items, t.deps.redis);
      const counts = await queue.getJobCounts("waiting", "prioritized");
      expect(counts).toEqual({ waiting: IN_ORDER_PER_OWNER, prioritized: 5 });

      // Again (the reconciler and the evaluation both enqueue a notification, by design): the
      // burst's count grows, but BullMQ ignores an add under a jobId it holds.
      await enqueueDeliveries(t.deps.queues, items, t.deps.redis);
      expect(await queue.getJobCounts("waiting", "prioritized")).toEqual(counts);
      expect((await queue.getJob(items[0]!.notificationId))?.priority).toBe(0);
      expect((await queue.getJob(items[IN_ORDER_PER_OWNER]!.notificationId))?.priority).toBe(1);
    } finally {
      await queue.obliterate({ force: true });
    }
  });
});
