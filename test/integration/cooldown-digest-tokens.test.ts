// A large_transfer cooldown digest of several tokens (pipeline/cooldown-digest.ts,
// domain/held-back-by-token.ts), through the real pipeline, delivery workers, a webhook receiver
// verifying signatures with standardwebhooks, an SMTP peer and the Twilio stand-in. The evasion
// review's scenario: an outsider's worthless mint starts the untokened alert's cooldown, the
// wallet's key sends 50,000 SOL out inside it, and the outsider sends 10^12 junk units after;
// until 2026-12 the digest named the junk as the "largest" and the drain reached no channel.
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

/** An untokened large_transfer alert at 1,000 with the cooldown; its id and, for a webhook, its signing secret. */
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
      /^3 more large_transfer firings held back during the cooldown, in 2 tokens; largest of each: Sent 50,000 SOL to \S+ \(threshold 1,000\); Received 1,000,000,000,000 \S+ from \S+ \(threshold 1,000\)\.$/,
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
    expect(email!.subject).toMatch(/^\[Risk alert\] Hot wallet: 3 held back — largest: Sent 50,000 SOL/);
    expect(email!.text).toMatch(/^Largest, token 1 of 2: +Sent 50,000 SOL to /m);
    expect(email!.text).toMatch(/^Largest, token 2 of 2: +Received 1,000,000,000,000 /m);

    // The SMS: the drain alone, and that another token was held back.
    const texts = standin.messages().filter((message) => message.to === phone).map((message) => message.body);
    expect(texts).toHaveLength(2);
    expect(texts[0]).toMatch(/^Risk alert on Hot wallet: .*Received 1,000,000 /);
    expect(texts[1]).toMatch(/^Risk alert on Hot wallet: 3 more large_transfer held back in the cooldown, in 2 tokens; largest: Sent 50,000 SOL to /);
    expect(texts[1]).not.toContain("1,000,000,000,000");
  });

  it("counts a swap's event under the token its wallet sent, so that a larger received transfer of the token it got does not displace it", async () => {
    const wallet = await track(t, token);
    const route = receiver.route("/digest-tokens-swap");
    const hook = await alertOn(wallet.walletId, { notificationMethod: "webhook", webhookUrl: route.url });
    route.verifyWith(hook.webhookSecret!);
    const outsider = randomAddress();
    const pool = randomAddress();

    await helius("TRANSFER", outsider, { tokenTransfers: [tokenTransfer(outsider, wallet.address, randomAddress(), 1_000_000)] });
    await waitFor("the junk firing's webhook", async () => route.requests.length === 1);
    offsetMs += 2_000;
    // The wallet swaps 10,000 SOL for 2,000,000 BONK: one event, "Sent 10,000 SOL and received 2,000,000 BONK in a swap".
    await helius("SWAP", wallet.address, {
      nativeTransfers: [{ fromUserAccount: wallet.address, toUserAccount: pool, amount: 10_000 * LAMPORTS }],
      tokenTransfers: [tokenTransfer(pool, wallet.address, BONK, 2_000_000)],
    });
    offsetMs += 1_000;
    // Then 5,000,000 BONK come in: BONK's largest, and received.
    await helius("TRANSFER", outsider, { tokenTransfers: [tokenTransfer(outsider, wallet.address, BONK, 5_000_000)] });
    await digestsDelivered([hook.alertId]);

    const request = route.requests[1]!;
    expect(request.verifiedWith).toEqual([hook.webhookSecret]);
    const held = (JSON.parse(request.body) as NotificationPayload).data.suppressed!;
    expect(held.count).toBe(2);
    expect(held.largestByToken!.map((named) => [named.direction, named.observed, named.reason.split(" (")[0]])).toEqual([
      ["sent", 10_000, "Sent 10,000 SOL and received 2,000,000 BONK in a swap"],
      ["received", 5_000_000, expect.stringMatching(/^Received 5,000,000 BONK from /)],
    ]);
    expect(held.strongest.observed).toBe(10_000);
  });
});
