// The webhook URL rules through the API, with the production settings: https only and no
// address range opened (the shared test settings open loopback for the delivery tests).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { auth, fieldErrors, insertWallet, problem } from "../helpers/alert-fixtures.ts";

let t: TestApp;
let token: string;
let walletId: string;

beforeAll(async () => {
  t = await startTestApp("alerts-webhook-url", { WEBHOOK_ALLOWED_CIDRS: "", WEBHOOK_ALLOW_HTTP: "false" });
  token = await t.token("alice");
  ({ walletId } = await insertWallet(t, "alice"));
});
afterAll(async () => {
  await t.close();
});

const create = async (webhookUrl: string) =>
  t.app.inject({
    method: "POST",
    url: "/v1/risk/alerts",
    headers: auth(token),
    payload: { walletId, condition: "large_transfer", threshold: 1000, notificationMethod: "webhook", webhookUrl },
  });

describe("webhookUrl rules on POST /v1/risk/alerts", () => {
  it.each([
    ["https://10.0.0.1/hook", "webhookUrl points to 10.0.0.1, a private address"],
    ["https://127.0.0.1:8443/hook", "webhookUrl points to 127.0.0.1, a loopback address"],
    ["https://2130706433/hook", "webhookUrl points to 127.0.0.1, a loopback address"],
    ["https://0x7f000001/hook", "webhookUrl points to 127.0.0.1, a loopback address"],
    ["https://0177.0.0.01/hook", "webhookUrl points to 127.0.0.1, a loopback address"],
    ["https://127.1/hook", "webhookUrl points to 127.0.0.1, a loopback address"],
    ["https://169.254.169.254/latest/meta-data/", "webhookUrl points to 169.254.169.254, a link-local address"],
    ["https://100.64.1.1/", "webhookUrl points to 100.64.1.1, a carrier-grade NAT (shared) address"],
    ["https://0.0.0.0/", "webhookUrl points to 0.0.0.0, an unspecified address"],
    ["https://[::1]/hook", "webhookUrl points to ::1, a loopback address"],
    ["https://[::ffff:10.0.0.1]/hook", "webhookUrl points to ::ffff:a00:1, an IPv4-mapped form of a private address"],
    ["https://[fd00::5]/hook", "webhookUrl points to fd00::5, a private (unique local) address"],
    ["https://203.0.113.5/hook", "webhookUrl points to 203.0.113.5, a documentation address"],
    ["https://localhost/hook", "webhookUrl host name localhost resolves to an address that webhooks may not reach (a private, loopback, link-local or other non-public range)"],
    ["https://hooks.localhost/hook", "webhookUrl host name hooks.localhost resolves to an address that webhooks may not reach (a private, loopback, link-local or other non-public range)"],
    [`https://${"a".repeat(63)}.${"b".repeat(63)}.${"c".repeat(63)}.${"d".repeat(63)}.e/hook`, "webhookUrl host name is not one DNS can hold (at most 253 characters, 63 per label)"],
    ["http://hooks.example.com/hook", "webhookUrl must use https"],
    ["ftp://hooks.example.com/hook", "webhookUrl must use https"],
    ["https://user:secret@hooks.example.com/hook", "webhookUrl must not contain a user name or password"],
    ["hooks.example.com/hook", "webhookUrl must be an absolute URL such as https://hooks.example.com/wallet-alerts"],
  ])("refuses %s with 400 and the reason", async (url, reason) => {
    const res = await create(url);
    const body = problem(res, 400, "validation_failed");
    expect(body.detail).toBe(reason);
    expect(body.errors).toEqual([{ path: "body.webhookUrl", message: reason.replace(/^webhookUrl /, "") }]);
  });

  it("refuses a URL longer than 2048 characters", async () => {
    const errors = fieldErrors(await create(`https://hooks.example.com/${"a".repeat(2048)}`));
    expect(errors).toEqual([expect.stringMatching(/^body\.webhookUrl must be at most 2048 characters$/)]);
  });

  it("accepts a public address and a name that does not resolve yet", async () => {
    for (const url of ["https://93.184.216.34/hook", "https://hooks.wallet-alerts-test.invalid/hook"]) {
      const res = await create(url);
      expect(res.statusCode, res.body).toBe(201);
      expect(res.json().webhookUrl).toBe(url);
    }
  });

  it("applies the same rules when PATCH changes the webhookUrl, and keeps the old URL", async () => {
    const created = (await create("https://93.184.216.34/hook")).json();
    const patch = await t.app.inject({
      method: "PATCH",
      url: `/v1/risk/alerts/${created.alertId}`,
      headers: auth(token),
      payload: { webhookUrl: "https://192.168.1.20/hook" },
    });
    expect(problem(patch, 400, "validation_failed").detail).toBe("webhookUrl points to 192.168.1.20, a private address");
    const read = await t.app.inject({ url: `/v1/risk/alerts/${created.alertId}`, headers: auth(token) });
    expect(read.json().webhookUrl).toBe("https://93.184.216.34/hook");
  });
});
