// The cooldown digest (pipeline/cooldown-digest.ts): what a cooldown held back is told once it
// ends, through the real pipeline, delivery workers, a webhook receiver and an SMTP peer. The
// app's clock is injected and moved past a cooldown's end; a digest's job, waiting in BullMQ's
// delayed set until then, is promoted rather than waited for.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { NotificationPayload } from "../../src/domain/types.ts";
import { runReconcileOnce } from "../../src/pipeline/reconcile.ts";
import { DELIVERY_QUEUE } from "../../src/queue/names.ts";
import type { RunningWorkers } from "../../src/queue/run-workers.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { randomAddress } from "../helpers/chain.ts";
import { putLabels, settled, startWorkers, track, tx, waitFor } from "../helpers/pipeline.ts";
import { bearer, ingestTransactions } from "../helpers/seed.ts";
import { parseMessage, startSmtpPeer, type SmtpPeer } from "../helpers/smtp-peer.ts";
import { startWebhookReceiver, type Route, type WebhookReceiver } from "../helpers/webhook-receiver.ts";

let t: TestApp;
let workers: RunningWorkers;
let receiver: WebhookReceiver;
let smtp: SmtpPeer;
let token: string;
let offsetMs = 0;
let blockTime = Math.floor(Date.now() / 1000);
let routes = 0;
const COOLDOWN_SECONDS = 20;

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  smtp = await startSmtpPeer();
  t = await startTestApp("cooldown-digest", { SMTP_URL: smtp.url }, { now: () => new Date(Date.now() + offsetMs) });
  workers = startWorkers(t, ["transactions", "risk", "deliver-webhook", "deliver-email"]);
  token = await t.token("alice");
});
afterAll(async () => {
  await workers?.close();
  await t?.close();
  await receiver?.close();
  await smtp?.close();
});

type DigestRow = { id: string; status: string; eventId: string | null; nextAttemptMs: number; windowStartMs: number; windowEndMs: number };

const digestsOf = (alertId: string) =>
  t.deps.sql<DigestRow[]>`
    select n.id, n.status, n.event_id as "eventId", (extract(epoch from n.next_attempt_at) * 1000)::float8 as "nextAttemptMs",
           (extract(epoch from d.window_start) * 1000)::float8 as "windowStartMs", (extract(epoch from d.window_end) * 1000)::float8 as "windowEndMs"
    from notifications n join cooldown_digests d on d.notification_id = n.id
    where n.alert_id = ${alertId} order by n.id`;

async function alertOn(walletId: string, body: Record<string, unknown>): Promise<string> {
  const res = await t.app.inject({
    method: "POST",
    url: "/v1/risk/alerts",
    headers: bearer(token),
    payload: { walletId, cooldownSeconds: COOLDOWN_SECONDS, ...body },
  });
  if (res.statusCode !== 201) throw new Error(`POST /v1/risk/alerts answered ${res.statusCode}: ${res.body}`);
  return (res.json() as { alertId: string }).alertId;
}

const webhookAlert = (walletId: string, route: Route, body: Record<string, unknown>) =>
  alertOn(walletId, { notificationMethod: "webhook", webhookUrl: route.url, ...body });

async function send(from: string, to: string, amount: number) {
  await ingestTransactions(t, token, [tx({ from, to, amount, token: "SOL", blockTime: blockTime++ })]);
  await settled(t);
}

/** Moves the app's clock on, and sends at once the delivery jobs parked until a time now past. */
async function advance(ms: number, channels: Array<"webhook" | "email"> = ["webhook", "email"]) {
  offsetMs += ms;
  for (const channel of channels) await t.deps.queues[DELIVERY_QUEUE[channel]].promoteJobs();
}

/**
 * Waits until the digest's delivery job is in BullMQ's delayed set: added there with a delay to
 * the cooldown's end, or parked there by a run that found it not due (a job the reconciler added).
 */
async function parked(notificationId: string, channel: "webhook" | "email" = "webhook") {
  const queue = t.deps.queues[DELIVERY_QUEUE[channel]];
  await waitFor(`digest ${notificationId} parked`, async () => (await queue.getJob(notificationId))?.isDelayed());
}

const bodies = (route: Route) => route.requests.map((request) => JSON.parse(request.body) as NotificationPayload);

describe("cooldown digest", () => {
  it("tells the desk, once the cooldown ends, of the 1,000,000 and 250,000 SOL transfers it held back after 150 SOL was sent", async () => {
    const wallet = await track(t, token, randomAddress(), "Cooldown desk");
    const route = receiver.route(`/digest-${++routes}`);
    const alertId = await webhookAlert(wallet.walletId, route, { condition: "large_transfer", threshold: 100, token: "SOL" });
    const mailAlertId = await alertOn(wallet.walletId, { condition: "large_transfer", threshold: 100, token: "SOL", notificationMethod: "email", recipient: "desk@example.com" });
    const counterparty = randomAddress();

    await send(wallet.address, counterparty, 150);
    const startedAt = Date.now() + offsetMs;
    await waitFor("the 150 SOL webhook", async () => route.requests.length === 1);
    offsetMs += 2_500;
    await send(wallet.address, counterparty, 1_000_000);
    offsetMs += 2_500;
    await send(wallet.address, counterparty, 250_000);

    // One digest per alert, pending, due when the cooldown ends; nothing more was sent meanwhile.
    const [digest, ...others] = await digestsOf(alertId);
    expect(others).toEqual([]);
    expect(digest).toMatchObject({ status: "pending", eventId: null });
    expect(digest!.nextAttemptMs).toBe(digest!.windowEndMs);
    expect(digest!.windowEndMs - digest!.windowStartMs).toBe(COOLDOWN_SECONDS * 1000);
    expect(Math.abs(digest!.windowStartMs - startedAt)).toBeLessThan(2_000);
    await parked(digest!.id);
    expect(route.requests).toHaveLength(1);
    // Added delayed until the cooldown's end (the app's clock), not run at once to find it not due.
    const job = (await t.deps.queues[DELIVERY_QUEUE.webhook].getJob(digest!.id))!;
    expect(job.attemptsStarted).toBe(0);
    expect(job.processedOn).toBeUndefined();
    expect(job.delay).toBeGreaterThan(0);
    expect(job.delay).toBeLessThanOrEqual(COOLDOWN_SECONDS * 1000); // the window began before it was made

    // The cooldown ends: the digest goes out, once, and names 2 held back and the largest.
    await advance(COOLDOWN_SECONDS * 1000);
    await waitFor("the digest webhook", async () => route.requests.length === 2);
    const sent = bodies(route)[1]!;
    expect(sent.type).toBe("risk_alert.suppressed");
    expect(route.requests[1]!.headers["webhook-id"]).toBe(digest!.id);
    expect(sent.data.observed).toBe(1_000_000);
    expect(sent.data.reason).toMatch(/^2 more large_transfer firings held back during the cooldown; largest: Sent 1,000,000 SOL to /);
    expect(sent.data.suppressed).toMatchObject({ count: 2, strongest: { observed: 1_000_000 } });
    expect(sent.data.suppressed!.eventIds).toHaveLength(2);
    expect(sent.data).not.toHaveProperty("transaction");

    // The next transfer after the cooldown is sent as usual, and no second digest follows it.
    await send(wallet.address, counterparty, 101);
    await waitFor("the 101 SOL webhook", async () => route.requests.length === 3);
    expect(bodies(route).map((body) => [body.type, body.data.observed])).toEqual([
      ["risk_alert.triggered", 150],
      ["risk_alert.suppressed", 1_000_000],
      ["risk_alert.triggered", 101],
    ]);
    expect(await digestsOf(alertId)).toHaveLength(1);

    const view = await t.app.inject({ url: `/v1/notifications/${digest!.id}`, headers: bearer(token) });
    expect(view.json()).toMatchObject({ notificationId: digest!.id, alertId, eventId: null, status: "delivered" });

    // The email alert on the same wallet: its own digest, in the subject and the text.
    const [mailDigest] = await digestsOf(mailAlertId);
    await waitFor("the digest email", async () => (await digestsOf(mailAlertId))[0]?.status === "delivered" || (await advance(0, ["email"]), false));
    const mails = smtp.messages.map((mail) => parseMessage(mail.raw)).filter((mail) => mail.headers.get("message-id")?.includes(mailDigest!.id));
    expect(mails).toHaveLength(1);
    // Until 2026-11-28 "[Risk alert] Cooldown desk: 2 more large_transfer held back in the cooldown": no amount.
    expect(mails[0]!.subject).toBe("[Risk alert] Cooldown desk: 2 held back — largest: Sent 1,000,000 SOL to…");
    expect(mails[0]!.text).toContain("largest: Sent 1,000,000 SOL to");
  });

  it("names the strongest held-back firing's counterparty in full, with its labels, and links it, its transaction and the wallet", async () => {
    // The responder review's live run: 1,500 SOL sent, then 250,000 SOL to an OFAC-listed address and 5,000 SOL held back.
    const wallet = await track(t, token, randomAddress(), "Tesorería");
    const route = receiver.route(`/digest-${++routes}`);
    const settings = { condition: "large_transfer", threshold: 1_000, token: "SOL" };
    const alertId = await webhookAlert(wallet.walletId, route, settings);
    const mailAlertId = await alertOn(wallet.walletId, { ...settings, notificationMethod: "email", recipient: "tesoreria@example.com" });
    const sanctioned = randomAddress();
    expect((await putLabels(t, token, [{ address: sanctioned, category: "sanctioned", score: 100, source: "OFAC SDN" }])).statusCode).toBe(200);
    await settled(t);

    await send(wallet.address, randomAddress(), 1_500);
    await waitFor("the 1,500 SOL webhook", async () => route.requests.length === 1);
    offsetMs += 2_500;
    await send(wallet.address, sanctioned, 250_000);
    offsetMs += 2_500;
    await send(wallet.address, randomAddress(), 5_000);
    const [digest] = await digestsOf(alertId);
    await parked(digest!.id);
    await advance(COOLDOWN_SECONDS * 1000);
    await waitFor("the digest webhook", async () => route.requests.length === 2);
    const strongest = bodies(route)[1]!.data.suppressed!.strongest;
    expect(strongest).toMatchObject({
      observed: 250_000,
      counterparty: { address: sanctioned, labels: [{ category: "sanctioned", score: 100, source: "OFAC SDN" }] },
    });
    const signature = strongest.transactionSignature!;

    const [mailDigest] = await digestsOf(mailAlertId);
    await waitFor("the digest email", async () => (await digestsOf(mailAlertId))[0]?.status === "delivered" || (await advance(0, ["email"]), false));
    const [mail] = smtp.messages.map((message) => parseMessage(message.raw)).filter((message) => message.headers.get("message-id")?.includes(mailDigest!.id));
    expect(mail!.subject).toBe("[Risk alert] Tesorería: 2 held back — SANCTIONED — largest: Sent 250,000 SOL…");
    // EXPLORER_TX_URL and EXPLORER_ADDRESS_URL unset: Solscan's pages.
    expect(mail!.text).toMatch(new RegExp(`^Counterparty: +${sanctioned}$`, "m"));
    expect(mail!.text).toMatch(/^Counterparty labels: sanctioned \(score 100, source OFAC SDN\), at the cooldown's end$/m);
    for (const url of [`https://solscan.io/tx/${signature}`, `https://solscan.io/account/${sanctioned}`, `https://solscan.io/account/${wallet.address}`]) {
      expect(mail!.html).toContain(`<a href="${url}">${url}</a>`);
    }
  });

  it("sends no digest for a cooldown that held nothing back", async () => {
    const wallet = await track(t, token);
    const route = receiver.route(`/digest-${++routes}`);
    const alertId = await webhookAlert(wallet.walletId, route, { condition: "large_transfer", threshold: 100 });
    await send(wallet.address, randomAddress(), 500);
    await advance(COOLDOWN_SECONDS * 1000 + 1_000);
    await send(wallet.address, randomAddress(), 600);
    await waitFor("both webhooks", async () => route.requests.length === 2);
    expect(await digestsOf(alertId)).toEqual([]);
    expect(bodies(route).map((body) => body.type)).toEqual(["risk_alert.triggered", "risk_alert.triggered"]);
  });

  it("makes one digest per window when the batch is evaluated again (a replay)", async () => {
    const wallet = await track(t, token);
    const route = receiver.route(`/digest-${++routes}`);
    const alertId = await webhookAlert(wallet.walletId, route, { condition: "large_transfer", threshold: 100 });
    await send(wallet.address, randomAddress(), 500);
    await send(wallet.address, randomAddress(), 700);
    const [batch] = await t.deps.sql<{ batchId: string }[]>`
      select batch_id as "batchId" from transactions where from_address = ${wallet.address} and amount = 700`;
    // The batch's mark taken away, its events are found recorded and no window gains a second digest.
    await t.deps.sql`update ingest_batches set evaluated_at = null where id = ${batch!.batchId}`;
    const { evaluateBatch } = await import("../../src/pipeline/evaluate-batch.ts");
    expect(await evaluateBatch(t.deps, batch!.batchId)).toMatchObject({ status: "evaluated", events: 0, notifications: 0 });
    // Another event of the same window: the window's digest exists already.
    await send(wallet.address, randomAddress(), 900);
    expect(await digestsOf(alertId)).toHaveLength(1);
    await advance(COOLDOWN_SECONDS * 1000);
    await waitFor("the digest", async () => route.requests.length === 2);
    expect(bodies(route)[1]!.data.suppressed).toMatchObject({ count: 2, strongest: { observed: 900 } });
  });

  it("is sent by the reconciler when its job was lost, and not before the cooldown ends", async () => {
    const wallet = await track(t, token);
    const route = receiver.route(`/digest-${++routes}`);
    const alertId = await webhookAlert(wallet.walletId, route, { condition: "large_transfer", threshold: 100 });
    await send(wallet.address, randomAddress(), 500);
    await send(wallet.address, randomAddress(), 800);
    const [digest] = await digestsOf(alertId);
    await parked(digest!.id);
    const queue = t.deps.queues[DELIVERY_QUEUE.webhook];
    await queue.remove(digest!.id); // Redis lost it

    const sweep = () => runReconcileOnce(t.deps, { graceMs: 0 });
    expect((await sweep()).notifications).toBeGreaterThanOrEqual(1);
    await parked(digest!.id);
    expect(route.requests).toHaveLength(1);
    expect((await digestsOf(alertId))[0]).toMatchObject({ status: "pending" });
    const [attempts] = await t.deps.sql<{ n: number }[]>`select count(*)::int as n from delivery_attempts where notification_id = ${digest!.id}`;
    expect(attempts!.n).toBe(0);

    await queue.remove(digest!.id); // lost again, now past the cooldown's end
    await advance(COOLDOWN_SECONDS * 1000);
    await sweep();
    await waitFor("the digest", async () => route.requests.length === 2);
    expect(bodies(route)[1]).toMatchObject({ type: "risk_alert.suppressed", data: { observed: 800, suppressed: { count: 1 } } });
  });

  it("is sent for an alert paused before its cooldown ends, as the alert's other owed notifications are", async () => {
    const wallet = await track(t, token);
    const route = receiver.route(`/digest-${++routes}`);
    const alertId = await webhookAlert(wallet.walletId, route, { condition: "large_transfer", threshold: 100 });
    await send(wallet.address, randomAddress(), 500);
    await send(wallet.address, randomAddress(), 800);
    const [digest] = await digestsOf(alertId);
    await parked(digest!.id);
    const pause = await t.app.inject({ method: "PATCH", url: `/v1/risk/alerts/${alertId}`, headers: bearer(token), payload: { status: "paused" } });
    expect(pause.statusCode).toBe(200);
    await advance(COOLDOWN_SECONDS * 1000);
    // The 800 was detected while the alert was active: the pause does not drop it.
    await waitFor("the digest", async () => route.requests.length === 2);
    expect(bodies(route)[1]).toMatchObject({ type: "risk_alert.suppressed", data: { observed: 800, suppressed: { count: 1 } } });
    const view = await t.app.inject({ url: `/v1/notifications/${digest!.id}`, headers: bearer(token) });
    expect(view.json()).toMatchObject({ status: "delivered" });
  });

  it("names the sanctioned 96 that a risk_score_increase cooldown held back after the mixer's 60", async () => {
    const wallet = await track(t, token);
    const route = receiver.route(`/digest-${++routes}`);
    const alertId = await webhookAlert(wallet.walletId, route, { condition: "risk_score_increase", threshold: 10 });
    const mixer = randomAddress();
    const sanctioned = randomAddress();
    await putLabels(t, token, [
      { address: mixer, category: "mixer", score: 90, source: "chainalysis" },
      { address: sanctioned, category: "sanctioned", score: 100, source: "ofac-sdn" },
    ]);
    await settled(t);
    await send(wallet.address, mixer, 1);
    await waitFor("the first rise's webhook", async () => route.requests.length === 1);
    const first = bodies(route)[0]!;
    expect(first.data.reason).toContain("from 0 to 60");
    offsetMs += 3_000;
    await send(wallet.address, sanctioned, 1);
    const [after] = await t.deps.sql<{ score: number }[]>`select risk_score as score from address_state where address = ${wallet.address}`;
    expect(after!.score).toBeGreaterThan(first.data.riskScore);

    const [digest] = await digestsOf(alertId);
    await parked(digest!.id);
    await advance(COOLDOWN_SECONDS * 1000);
    await waitFor("the digest", async () => route.requests.length === 2);
    const sent = bodies(route)[1]!;
    expect(sent.type).toBe("risk_alert.suppressed");
    expect(after!.score).toBe(96);
    expect(sent.data.reason).toMatch(/^1 more risk_score_increase firing held back during the cooldown: Risk score rose 36 points, from 60 to 96 .*sanctioned counterparty/);
    expect(sent.data.riskScore).toBe(96);
  });

  it("reports the score the held-back transfer was made at, not the wallet's after its counterparty was delisted", async () => {
    const wallet = await track(t, token);
    const route = receiver.route(`/digest-${++routes}`);
    const alertId = await webhookAlert(wallet.walletId, route, { condition: "large_transfer", threshold: 10 });
    await send(wallet.address, randomAddress(), 20);
    await waitFor("the first webhook", async () => route.requests.length === 1);
    const sanctioned = randomAddress();
    expect((await putLabels(t, token, [{ address: sanctioned, category: "sanctioned", score: 100, source: "ofac-sdn" }])).statusCode).toBe(200);
    await settled(t);
    offsetMs += 2_000;
    await send(wallet.address, sanctioned, 30);
    const scoreNow = async () =>
      (await t.deps.sql<{ score: number; factors: string[] }[]>`
        select risk_score as score, risk_factors as factors from address_state where address = ${wallet.address}`)[0]!;
    const atFiring = await scoreNow();
    expect(atFiring.factors).toContain("sanctioned_counterparty");

    // The suppressed event keeps the score it was judged with, as the events API shows.
    const listed = await t.app.inject({ url: `/v1/risk/alerts/${alertId}/events`, headers: bearer(token) });
    const held = (listed.json() as { events: Array<{ suppressed: boolean; riskScore: number; riskFactors: string[] }> }).events.find((e) => e.suppressed)!;
    expect(held).toMatchObject({ riskScore: atFiring.score, riskFactors: atFiring.factors });

    // Delisted before the cooldown ends: the wallet's score falls back.
    const delisted = await t.app.inject({ method: "DELETE", url: "/v1/risk/labels", headers: bearer(token), payload: { addresses: [sanctioned], source: "ofac-sdn" } });
    expect(delisted.statusCode, delisted.body).toBe(200);
    await settled(t);
    expect((await scoreNow()).score).toBeLessThan(atFiring.score);

    const [digest] = await digestsOf(alertId);
    await parked(digest!.id);
    await advance(COOLDOWN_SECONDS * 1000);
    await waitFor("the digest", async () => route.requests.length === 2);
    const sent = bodies(route)[1]!;
    expect(sent.type).toBe("risk_alert.suppressed");
    expect(sent.data).toMatchObject({ observed: 30, riskScore: atFiring.score, riskFactors: atFiring.factors });
    // Its counterparty's labels are as they are at the cooldown's end (its reason names the firing's).
    expect(sent.data.reason).toContain("(sanctioned, threshold 10)");
    expect(sent.data.suppressed!.strongest.counterparty).toEqual({ address: sanctioned, labels: [] });
  });
});
