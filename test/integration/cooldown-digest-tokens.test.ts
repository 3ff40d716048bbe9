// A large_transfer cooldown digest of several tokens (pipeline/cooldown-digest.ts,
// domain/held-back-by-token.ts), through the real pipeline, delivery workers, a webhook receiver
// verifying signatures with standardwebhooks, an SMTP peer and the Twilio stand-in. The evasion
// review's scenario: an outsider's worthless mint starts the untokened alert's cooldown, the
// wallet's key sends 50,000 SOL out inside it, and the outsider sends 10^12 junk units after;
// until 2026-11-28 the digest named the junk as the "largest" and the drain reached no channel.
// An alert with a token filter is not ranked per token: its digest names its highest firing,
// a 100,000 SOL receipt over a 1,001 SOL send (diff review, 2026-11-28).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { NotificationPayload } from "../../src/domain/types.ts";
import { DELIVERY_QUEUE } from "../../src/queue/names.ts";
import type { RunningWorkers } from "../../src/queue/run-workers.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { randomAddress, randomSignature } from "../helpers/chain.ts";
import { settled, startWorkers, track, tx, waitFor } from "../helpers/pipeline.ts";
import { bearer, ingestTransactions } from "../helpers/seed.ts";
import { parseMessage, startSmtpPeer, type SmtpPeer } from "../helpers/smtp-peer.ts";
import { startTwilioStandin, twilioSettings, type TwilioStandin } from "../helpers/twilio-standin.ts";
import { startWebhookReceiver, type WebhookReceiver } from "../helpers/webhook-receiver.ts";

let t: TestApp;
let workers: RunningWorkers;
let receiver: WebhookReceiver;
let smtp: SmtpPeer;
let standin: TwilioStandin;
let token: string;
let offsetMs = 0;
let blockTime = Math.floor(Date.now() / 1000);
const COOLDOWN_SECONDS = 20;
const CHANNELS = ["webhook", "email", "sms"] as const;
const HELIUS_SECRET = "cooldown-digest-tokens-helius-0123456789";
const LAMPORTS = 1_000_000_000;
const BONK = "DezXAZ8z7PnrnRJjz3wXBoRgixCa6xjnB7YaB1pPB263";
const USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  smtp = await startSmtpPeer();
  standin = await startTwilioStandin();
  t = await startTestApp(
    "cooldown-digest-tokens",
    { SMTP_URL: smtp.url, ...twilioSettings(standin.baseUrl), HELIUS_AUTH_HEADER: HELIUS_SECRET },
    { now: () => new Date(Date.now() + offsetMs) },
  );
  workers = startWorkers(t, ["transactions", "risk", "deliver-webhook", "deliver-email", "deliver-sms"]);
  token = await t.token("alice");
});
afterAll(async () => {
  await workers?.close();
  await t?.close();
  await standin?.close();
  await receiver?.close();
  await smtp?.close();
});

/** A large_transfer alert at 1,000 with the cooldown, untokened unless `body` gives a token; its id and, for a webhook, its signing secret. */
async function alertOn(walletId: string, body: Record<string, unknown>): Promise<{ alertId: string; webhookSecret?: string }> {
  const res = await t.app.inject({
    method: "POST",
    url: "/v1/risk/alerts",
    headers: bearer(token),
    payload: { walletId, condition: "large_transfer", threshold: 1_000, cooldownSeconds: COOLDOWN_SECONDS, ...body },
  });
  if (res.statusCode !== 201) throw new Error(`POST /v1/risk/alerts answered ${res.statusCode}: ${res.body}`);
  return res.json();
}

async function ingest(overrides: Parameters<typeof tx>[0]) {
  await ingestTransactions(t, token, [tx({ ...overrides, blockTime: blockTime++ })]);
  await settled(t);
}

type HeliusTransfers = { nativeTransfers?: Array<Record<string, unknown>>; tokenTransfers?: Array<Record<string, unknown>> };

/** One Helius enhanced-webhook item, posted as Helius posts it, and evaluated. */
async function helius(type: string, feePayer: string, transfers: HeliusTransfers) {
  const item = {
    signature: randomSignature(),
    slot: 415_184_133,
    timestamp: blockTime++,
    fee: 5000,
    feePayer,
    type,
    transactionError: null,
    events: {},
    nativeTransfers: [],
    tokenTransfers: [],
    ...transfers,
  };
  const res = await t.app.inject({ method: "POST", url: "/v1/ingest/helius", headers: { authorization: HELIUS_SECRET }, payload: [item] });
  if (res.statusCode !== 202) throw new Error(`POST /v1/ingest/helius answered ${res.statusCode}: ${res.body}`);
  await settled(t);
}

const tokenTransfer = (from: string, to: string, mint: string, tokenAmount: number) => ({
  fromUserAccount: from,
  toUserAccount: to,
  fromTokenAccount: randomAddress(),
  toTokenAccount: randomAddress(),
  mint,
  tokenAmount,
});

/** Moves the clock past the cooldown and waits until each alert's digest is delivered. */
async function digestsDelivered(alertIds: readonly string[]) {
  offsetMs += COOLDOWN_SECONDS * 1000;
  await waitFor("the digests delivered", async () => {
    for (const channel of CHANNELS) await t.deps.queues[DELIVERY_QUEUE[channel]].promoteJobs();
    const statuses = await Promise.all(alertIds.map(async (alertId) => (await digestOf(alertId))?.status));
    return statuses.every((status) => status === "delivered");
  });
}

/**
 * A tracked wallet with a webhook large_transfer alert whose cooldown an outsider's 1,000,000
 * junk units have started (that firing delivered), and the clock 2 s on.
 */
async function webhookAlertCooling(path: string) {
  const wallet = await track(t, token);
  const route = receiver.route(path);
  const hook = await alertOn(wallet.walletId, { notificationMethod: "webhook", webhookUrl: route.url });
  route.verifyWith(hook.webhookSecret!);
  const outsider = randomAddress();
  await helius("TRANSFER", outsider, { tokenTransfers: [tokenTransfer(outsider, wallet.address, randomAddress(), 1_000_000)] });
  await waitFor("the junk firing's webhook", async () => route.requests.length === 1);
  offsetMs += 2_000;
  return { wallet, route, hook, outsider };
}

/** The digest webhook (the route's second request, after the junk firing's), its signature checked with the alert's secret. */
function verifiedDigest(route: ReturnType<typeof receiver.route>, hook: { webhookSecret?: string }) {
  const request = route.requests[1]!;
  expect(request.verifiedWith).toEqual([hook.webhookSecret]);
  return (JSON.parse(request.body) as NotificationPayload).data.suppressed!;
}

/** Each named token's direction, amount and the reason's news (before its parenthesis). */
const namedTokens = (held: NonNullable<NotificationPayload["data"]["suppressed"]>) =>
  held.largestByToken!.map((named) => [named.direction, named.observed, named.reason.split(" (")[0]]);

const digestOf = async (alertId: string) =>
  (await t.deps.sql<{ id: string; status: string }[]>`
    select n.id, n.status from notifications n join cooldown_digests d on d.notification_id = n.id where n.alert_id = ${alertId}`)[0];

describe("a large_transfer cooldown digest of several tokens", () => {
  it("names the 50,000 SOL the wallet sent first, beside the outsider's 10^12 junk units, in its webhook, email and SMS", async () => {
    const wallet = await track(t, token, randomAddress(), "Hot wallet");
    const route = receiver.route("/digest-tokens");
    const hook = await alertOn(wallet.walletId, { notificationMethod: "webhook", webhookUrl: route.url });
    route.verifyWith(hook.webhookSecret!);
    const mail = await alertOn(wallet.walletId, { notificationMethod: "email", recipient: "desk@example.com" });
    const phone = "+14155550171";
    const sms = await alertOn(wallet.walletId, { notificationMethod: "sms", recipient: phone });
    const junkMint = randomAddress();
    const outsider = randomAddress();
    const attacker = randomAddress();

    // 1. An outsider sends 1,000,000 units of a worthless mint: every alert fires, and its cooldown starts.
    await ingest({ from: outsider, to: wallet.address, amount: 1_000_000, token: junkMint });
    await waitFor("the junk firing's webhook", async () => route.requests.length === 1);
    // 2. The key holder sends 50,000 SOL out: held back.
    offsetMs += 2_500;
    await ingest({ from: wallet.address, to: attacker, amount: 50_000, token: "SOL" });
    // 3. The outsider sends 10^12 junk units: held back.
    offsetMs += 1_500;
    await ingest({ from: outsider, to: wallet.address, amount: 1_000_000_000_000, token: junkMint });
    // 4. And 5,000,000 more of it, its mint given, calling itself USDC: the same token (its mint), held back.
    offsetMs += 1_000;
    await ingest({ from: outsider, to: wallet.address, amount: 5_000_000, token: "USDC", mint: junkMint });
    for (const { alertId } of [hook, mail, sms]) expect(await digestOf(alertId), alertId).toMatchObject({ status: "pending" });

    // The cooldown ends; the digests go out.
    await digestsDelivered([hook, mail, sms].map(({ alertId }) => alertId));

    // The webhook, signed: the drain is `strongest` and first of largestByToken; the junk is named too, never compared with it.
    expect(route.requests).toHaveLength(2);
    const request = route.requests[1]!;
    expect(request.verifiedWith).toEqual([hook.webhookSecret]);
    const body = JSON.parse(request.body) as NotificationPayload;
    expect(body.type).toBe("risk_alert.suppressed");
    expect(body.data.observed).toBe(50_000);
    expect(body.data.reason).toMatch(
      /^3 more large_transfer firings held back during the cooldown, in 2 tokens; largest sent: Sent 50,000 SOL to \S+ \(threshold 1,000\); largest received: Received 1,000,000,000,000 \S+ from \S+ \(threshold 1,000\)\.$/,
    );
    const held = body.data.suppressed!;
    expect(held).toMatchObject({ count: 3, otherTokens: 0, strongest: { observed: 50_000, counterparty: { address: attacker } } });
    expect(held.strongest.reason).toMatch(/^Sent 50,000 SOL to /);
    expect(held.largestByToken!.map((named) => [named.direction, named.observed])).toEqual([
      ["sent", 50_000],
      ["received", 1_000_000_000_000],
    ]);
    expect(held.largestByToken![0]!.eventId).toBe(held.strongest.eventId);

    // The email: the drain in the subject and first in the body.
    const { id: mailDigestId } = (await digestOf(mail.alertId))!;
    const [email] = smtp.messages.map((message) => parseMessage(message.raw)).filter((message) => message.headers.get("message-id")?.includes(mailDigestId));
    expect(email!.subject).toMatch(/^\[Risk alert\] Hot wallet: 3 held back — largest sent: Sent 50,000 SOL/);
    expect(email!.text).toMatch(/^Largest sent, token 1 of 2: +Sent 50,000 SOL to /m);
    expect(email!.text).toMatch(/^Largest received, token 2 of 2: +Received 1,000,000,000,000 /m);

    // The SMS: the drain alone, and that another token was held back.
    const texts = standin.messages().filter((message) => message.to === phone).map((message) => message.body);
    expect(texts).toHaveLength(2);
    expect(texts[0]).toMatch(/^Risk alert on Hot wallet: .*Received 1,000,000 /);
    expect(texts[1]).toMatch(/^Risk alert on Hot wallet: 3 more large_transfer held back in the cooldown, in 2 tokens; largest sent: Sent 50,000 SOL to /);
    expect(texts[1]).not.toContain("1,000,000,000,000");
  });

  it("counts a swap's event under the token its wallet sent, so that a larger received transfer of the token it got does not displace it", async () => {
    const { wallet, route, hook, outsider } = await webhookAlertCooling("/digest-tokens-swap");
    const pool = randomAddress();
    // The wallet swaps 10,000 SOL for 2,000,000 BONK: one event, "Sent 10,000 SOL and received 2,000,000 BONK in a swap".
    await helius("SWAP", wallet.address, {
      nativeTransfers: [{ fromUserAccount: wallet.address, toUserAccount: pool, amount: 10_000 * LAMPORTS }],
      tokenTransfers: [tokenTransfer(pool, wallet.address, BONK, 2_000_000)],
    });
    offsetMs += 1_000;
    // Then 5,000,000 BONK come in: BONK's largest, and received.
    await helius("TRANSFER", outsider, { tokenTransfers: [tokenTransfer(outsider, wallet.address, BONK, 5_000_000)] });
    await digestsDelivered([hook.alertId]);

    const held = verifiedDigest(route, hook);
    expect(held.count).toBe(2);
    expect(namedTokens(held)).toEqual([
      ["sent", 10_000, "Sent 10,000 SOL and received 2,000,000 BONK in a swap"],
      ["received", 5_000_000, expect.stringMatching(/^Received 5,000,000 BONK from /)],
    ]);
    expect(held.strongest.observed).toBe(10_000);
  });

  it("files each event under its reason's direction and the leg group its amount totals, not under the transaction's first leg", async () => {
    const { wallet, route, hook, outsider } = await webhookAlertCooling("/digest-tokens-legs");
    const desk = randomAddress();
    // A TRANSFER is token-first: leg 0 is the 10,000 BONK received, leg 1 the 10,000 SOL sent.
    // One event, "Sent 10,000 SOL and received 10,000 BONK": its direction, not leg order or an
    // equal amount, makes it SOL's.
    await helius("TRANSFER", wallet.address, {
      tokenTransfers: [tokenTransfer(outsider, wallet.address, BONK, 10_000)],
      nativeTransfers: [{ fromUserAccount: wallet.address, toUserAccount: desk, amount: 10_000 * LAMPORTS }],
    });
    offsetMs += 1_000;
    // Leg 0 receives 1 BONK, leg 1 sends a 0.5 SOL tip, leg 2 sends 5,000 USDC: the event is the
    // USDC alone ("Sent 5,000 USDC to …"), and of the two sent leg groups its total matches the later.
    await helius("TRANSFER", wallet.address, {
      tokenTransfers: [tokenTransfer(outsider, wallet.address, BONK, 1), tokenTransfer(wallet.address, desk, USDC, 5_000)],
      nativeTransfers: [{ fromUserAccount: wallet.address, toUserAccount: randomAddress(), amount: LAMPORTS / 2 }],
    });
    const legs = await t.deps.sql<{ leg: number; token: string; sent: boolean }[]>`
      select leg, token, from_address = ${wallet.address} as sent from transactions
      where signature in (select transaction_signature from alert_events where alert_id = ${hook.alertId} and suppressed)
      order by block_time, leg`;
    expect(legs.map((leg) => [leg.leg, leg.token, leg.sent])).toEqual([
      [0, "BONK", false],
      [1, "SOL", true],
      [0, "BONK", false],
      [1, "SOL", true],
      [2, "USDC", true],
    ]);
    await digestsDelivered([hook.alertId]);

    const held = verifiedDigest(route, hook);
    expect(held.count).toBe(2);
    expect(namedTokens(held)).toEqual([
      ["sent", 10_000, "Sent 10,000 SOL and received 10,000 BONK"],
      ["sent", 5_000, expect.stringMatching(/^Sent 5,000 USDC to /)],
    ]);
    expect(held.otherTokens).toBe(0);
  });
});

describe("a large_transfer cooldown digest of an alert with a token filter", () => {
  it("names a SOL alert's 100,000 SOL receipt as its largest, over the 1,001 SOL sent after it, in its webhook, email and SMS, and lists no tokens", async () => {
    const wallet = await track(t, token, randomAddress(), "SOL desk");
    const route = receiver.route("/digest-sol-filter");
    const hook = await alertOn(wallet.walletId, { token: "SOL", notificationMethod: "webhook", webhookUrl: route.url });
    route.verifyWith(hook.webhookSecret!);
    const mail = await alertOn(wallet.walletId, { token: "SOL", notificationMethod: "email", recipient: "sol-desk@example.com" });
    const phone = "+14155550172";
    const sms = await alertOn(wallet.walletId, { token: "SOL", notificationMethod: "sms", recipient: phone });
    const sender = randomAddress();

    // The review's scenario: 2,000 SOL sent (notified, the cooldown starts), 100,000 SOL received, 1,001 SOL sent.
    await ingest({ from: wallet.address, to: randomAddress(), amount: 2_000, token: "SOL" });
    await waitFor("the 2,000 SOL webhook", async () => route.requests.length === 1);
    offsetMs += 2_500;
    await ingest({ from: sender, to: wallet.address, amount: 100_000, token: "SOL" });
    offsetMs += 1_500;
    await ingest({ from: wallet.address, to: randomAddress(), amount: 1_001, token: "SOL" });
    await digestsDelivered([hook, mail, sms].map(({ alertId }) => alertId));

    const request = route.requests[1]!;
    expect(request.verifiedWith).toEqual([hook.webhookSecret]);
    const body = JSON.parse(request.body) as NotificationPayload;
    expect(body.data.observed).toBe(100_000);
    expect(body.data.reason).toMatch(/^2 more large_transfer firings held back during the cooldown; largest: Received 100,000 SOL from \S+ \(threshold 1,000\)\.$/);
    const held = body.data.suppressed!;
    expect(held).toMatchObject({ count: 2, strongest: { observed: 100_000, counterparty: { address: sender } } });
    expect(held).not.toHaveProperty("largestByToken");
    expect(held).not.toHaveProperty("otherTokens");

    const { id: mailDigestId } = (await digestOf(mail.alertId))!;
    const [email] = smtp.messages.map((message) => parseMessage(message.raw)).filter((message) => message.headers.get("message-id")?.includes(mailDigestId));
    expect(email!.subject).toMatch(/^\[Risk alert\] SOL desk: 2 held back — largest: Received 100,000 SOL/);
    expect(email!.text).toMatch(/^Largest: +Received 100,000 SOL from /m);
    expect(email!.text).not.toMatch(/token 1 of|1,001 SOL/);

    const texts = standin.messages().filter((message) => message.to === phone).map((message) => message.body);
    expect(texts).toHaveLength(2);
    expect(texts[1]).toMatch(/^Risk alert on SOL desk: 2 more large_transfer held back in the cooldown; largest: Received 100,000 SOL from /);
  });

  it("counts a USDC alert's 5,000 USDC receipt as USDC, not as the 5,000 BONK its transaction also brought: one token, no list", async () => {
    const wallet = await track(t, token);
    const route = receiver.route("/digest-usdc-filter");
    const hook = await alertOn(wallet.walletId, { token: "USDC", notificationMethod: "webhook", webhookUrl: route.url });
    route.verifyWith(hook.webhookSecret!);
    const outsider = randomAddress();

    await helius("TRANSFER", outsider, { tokenTransfers: [tokenTransfer(outsider, wallet.address, USDC, 2_000)] });
    await waitFor("the 2,000 USDC webhook", async () => route.requests.length === 1);
    offsetMs += 2_000;
    // The review's scenario: 5,000 BONK (leg 0) and 5,000 USDC (leg 1) in one transaction, then 3,000 USDC.
    await helius("TRANSFER", outsider, { tokenTransfers: [tokenTransfer(outsider, wallet.address, BONK, 5_000), tokenTransfer(outsider, wallet.address, USDC, 5_000)] });
    offsetMs += 1_000;
    await helius("TRANSFER", outsider, { tokenTransfers: [tokenTransfer(outsider, wallet.address, USDC, 3_000)] });
    await digestsDelivered([hook.alertId]);

    const request = route.requests[1]!;
    expect(request.verifiedWith).toEqual([hook.webhookSecret]);
    const body = JSON.parse(request.body) as NotificationPayload;
    expect(body.data.reason).toMatch(/^2 more large_transfer firings held back during the cooldown; largest: Received 5,000 USDC from /);
    expect(body.data.suppressed).toMatchObject({ count: 2, strongest: { observed: 5_000 } });
    expect(body.data.suppressed).not.toHaveProperty("largestByToken");
  });
});
