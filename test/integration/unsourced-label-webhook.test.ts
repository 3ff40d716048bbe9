// A label loaded without a source is stored with source '' (db/queries/risk-labels.ts), and the
// API says null for it. The evaluation carried the stored '' on into notifications: a webhook's
// `counterparty.labels[].source` was "" where GET /v1/risk/labels said null, and the email read
// "sanctioned (score 100, source )". End to end here: PUT without a source → evaluation →
// a signed POST to a loopback receiver, whose body says null, as the API does.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { NotificationPayload } from "../../src/domain/types.ts";
import { renderEmail } from "../../src/notify/render.ts";
import type { RunningWorkers } from "../../src/queue/run-workers.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { randomAddress } from "../helpers/chain.ts";
import { putLabels, settled, startWorkers, track, tx } from "../helpers/pipeline.ts";
import { bearer, ingestTransactions } from "../helpers/seed.ts";
import { waitFor } from "../helpers/wait.ts";
import { startWebhookReceiver, type WebhookReceiver } from "../helpers/webhook-receiver.ts";

let t: TestApp;
let workers: RunningWorkers;
let receiver: WebhookReceiver;
let token: string;

beforeAll(async () => {
  t = await startTestApp("unsourced-label-webhook");
  receiver = await startWebhookReceiver();
  workers = startWorkers(t, ["transactions", "risk", "deliver-webhook"]);
  token = await t.token("compliance-desk");
});
afterAll(async () => {
  await workers?.close();
  await receiver?.close();
  await t?.close();
});

describe("a counterparty labelled without a source", () => {
  it("reaches the webhook with source null, as GET /v1/risk/labels says it, and its email says \"no source\"", async () => {
    const counterparty = randomAddress();
    const labelled = await putLabels(t, token, [
      { address: counterparty, category: "sanctioned", score: 100 },
      { address: counterparty, category: "mixer", score: 90, source: "vendor-x" },
    ]);
    expect(labelled.statusCode, labelled.body).toBe(200);
    const wallet = await track(t, token);
    const route = receiver.route("/suspicious");
    const created = await t.app.inject({
      method: "POST",
      url: "/v1/risk/alerts",
      headers: bearer(token),
      payload: { walletId: wallet.walletId, condition: "suspicious_counterparty", threshold: 75, notificationMethod: "webhook", webhookUrl: route.url },
    });
    expect(created.statusCode, created.body).toBe(201);
    route.verifyWith(created.json<{ webhookSecret: string }>().webhookSecret);

    await ingestTransactions(t, token, [tx({ from: wallet.address, to: counterparty, amount: 5, blockTime: Math.floor(Date.now() / 1000) })]);
    await settled(t);
    const [request] = await waitFor("the firing at the receiver", async () => (route.requests.length > 0 ? route.requests : undefined));
    expect(request!.verifiedWith).toHaveLength(1);
    const payload = JSON.parse(request!.body) as NotificationPayload;

    const api = (await t.app.inject({ url: `/v1/risk/labels/${counterparty}`, headers: bearer(token) })).json<{
      labels: Array<{ category: string; score: number; source: string | null }>;
    }>();
    const expected = [
      { category: "sanctioned", score: 100, source: null },
      { category: "mixer", score: 90, source: "vendor-x" },
    ];
    expect(api.labels.map(({ category, score, source }) => ({ category, score, source }))).toEqual(expected);
    expect(payload.data.counterparty).toEqual({ address: counterparty, risk: 100, labels: expected });

    const email = renderEmail(payload);
    expect(email.text).toMatch(/^Counterparty labels: +sanctioned \(score 100, no source\); mixer \(score 90, source vendor-x\)$/m);
    expect(email.text).not.toContain("source )");
  });
});
