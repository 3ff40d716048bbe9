// The SSRF guard at delivery time: with WEBHOOK_ALLOWED_CIDRS empty, no webhook may reach
// a loopback, private, link-local, CGNAT or unspecified address, however it is spelled or
// whatever a host name resolves to. Rows are written directly, as if they had slipped past
// the creation-time checks (or DNS had changed since), and real receivers listen on the
// loopback addresses so that a leak would be seen.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createChannels } from "../../src/notify/channels/index.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { attemptsOf, isFinished, seedAlert, seedNotification, startDeliveryWorkers, waitForNotification, type DeliveryWorkers } from "../helpers/delivery.ts";
import { startWebhookReceiver, type WebhookReceiver } from "../helpers/webhook-receiver.ts";

let t: TestApp;
let v4: WebhookReceiver;
let v6: WebhookReceiver;
let workers: DeliveryWorkers;

/** Test names that resolve to addresses we choose, as the dispatcher's injectable lookup allows. */
const FAKE_DNS: Record<string, string[]> = {
  "internal.example": ["127.0.0.1"],
  "rebind.example": ["93.184.215.14", "127.0.0.1"],
  "metadata.example": ["169.254.169.254"],
};
const resolve = async (host: string) => {
  const answer = FAKE_DNS[host];
  if (!answer) throw Object.assign(new Error(`${host} not in the test DNS`), { code: "ENOTFOUND" });
  return answer;
};

beforeAll(async () => {
  t = await startTestApp("ssrf-delivery", { WEBHOOK_ALLOWED_CIDRS: "", RETRY_SCHEDULE: "100ms" });
  expect(t.config.webhookAllowedCidrs).toEqual([]);
  v4 = await startWebhookReceiver({ host: "127.0.0.1" });
  v6 = await startWebhookReceiver({ host: "::1" });
  workers = startDeliveryWorkers(t, { webhookTimeoutMs: 1_000, resolve });
});
afterAll(async () => {
  await workers?.close();
  await v4?.close();
  await v6?.close();
  await t?.close();
});

async function deliverTo(url: string) {
  const alert = await seedAlert(t, { method: "webhook", webhookUrl: url });
  const id = await seedNotification(t, alert, "webhook", url);
  const row = await waitForNotification(t, id, isFinished);
  return { row, attempts: await attemptsOf(t, id) };
}

describe("SSRF guard at delivery", () => {
  const cases: Array<[string, () => string, RegExp]> = [
    ["127.0.0.1", () => `http://127.0.0.1:${v4.port}/hook`, /127\.0\.0\.1: a loopback address/],
    ["localhost", () => `http://localhost:${v4.port}/hook`, /localhost: it resolves to an address that webhooks may not reach/],
    ["[::1]", () => `http://[::1]:${v6.port}/hook`, /::1: a loopback address/],
    ["[::ffff:127.0.0.1]", () => `http://[::ffff:127.0.0.1]:${v4.port}/hook`, /an IPv4-mapped form of a loopback address/],
    ["0.0.0.0", () => `http://0.0.0.0:${v4.port}/hook`, /0\.0\.0\.0: an unspecified address/],
    ["0x7f.1 (hex short form)", () => `http://0x7f.1:${v4.port}/hook`, /127\.0\.0\.1: a loopback address/],
    ["10.0.0.1", () => "http://10.0.0.1/hook", /10\.0\.0\.1: a private address/],
    ["169.254.169.254", () => "http://169.254.169.254/latest/meta-data/", /169\.254\.169\.254: a link-local address/],
    ["100.64.0.1", () => "http://100.64.0.1/hook", /100\.64\.0\.1: a carrier-grade NAT/],
    ["a name resolving to loopback", () => `http://internal.example:${v4.port}/hook`, /internal\.example: it resolves to an address that webhooks may not reach/],
    ["a name with one public and one loopback address", () => `http://rebind.example:${v4.port}/hook`, /rebind\.example: it resolves to an address that webhooks may not reach/],
    ["a name resolving to the metadata address", () => "http://metadata.example/latest/", /metadata\.example: it resolves to an address that webhooks may not reach/],
  ];

  it.each(cases)("refuses %s at connect time, permanently, and nothing is received", async (label, url, reason) => {
    const { row, attempts } = await deliverTo(url());
    expect(row.status).toBe("failed");
    expect(attempts).toHaveLength(1);
    expect(attempts[0]!.statusCode).toBeNull();
    expect(attempts[0]!.error).toMatch(/^ADDRESS_REFUSED: refused to connect to /);
    expect(attempts[0]!.error).toMatch(reason);
    // A name's owner is not told what it resolved to: that would map internal names.
    if (/name|localhost/.test(label)) expect(attempts[0]!.error).not.toMatch(/127\.0\.0\.1|::1|169\.254/);
    expect(v4.all).toHaveLength(0);
    expect(v6.all).toHaveLength(0);
  });

  it("reaches the same receivers through the same names once loopback is allowed (control)", async () => {
    const allowed = createChannels({ ...t.config, webhookAllowedCidrs: ["127.0.0.0/8", "::1/128"] }, t.deps.logger, { resolve });
    try {
      const alert = await seedAlert(t, { method: "webhook", webhookUrl: "http://internal.example/" });
      for (const url of [`http://internal.example:${v4.port}/control`, `http://[::1]:${v6.port}/control`, `http://[::ffff:127.0.0.1]:${v4.port}/control`]) {
        const result = await allowed.webhook.send({
          notificationId: "ntf_control",
          destination: url,
          payload: { type: "risk_alert.test", timestamp: new Date().toISOString(), data: { alertId: alert.alertId } } as never,
          secrets: [alert.secret!],
          attemptAt: new Date(),
        });
        expect(result.statusCode, url).toBe(404); // the receiver answered: nobody set up /control
      }
      expect(v4.all.map((r) => r.path)).toEqual(["/control", "/control"]);
      expect(v6.all.map((r) => r.path)).toEqual(["/control"]);
    } finally {
      await allowed.close();
      v4.all.length = 0;
      v6.all.length = 0;
    }
  });
});
