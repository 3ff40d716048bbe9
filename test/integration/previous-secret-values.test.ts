// A secret rotated by a rolling deploy: every process runs with the new value and the old one
// (…_PREVIOUS) until the peer (Helius's webhook, Twilio's promotion, Prometheus's scrape job) has
// switched, so whichever value the peer sends, and whichever processes are restarted yet, it is
// taken. Each surface takes both and refuses a third; neither value reaches the log, where a
// start-up line says a previous value is in force.
import { readFileSync } from "node:fs";
import { Registry } from "prom-client";
import twilio from "twilio";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMetricsServer } from "../../src/metrics/index.ts";
import { CALLBACK_ROUTE } from "../helpers/carrier-callbacks.ts";
import { startLoggedApp, type LoggedApp } from "../helpers/logged-app.ts";
import { TEST_TWILIO } from "../helpers/twilio-standin.ts";

const HELIUS = { current: "helius-new-auth-header-0123456789", previous: "helius-old-auth-header-9876543210", other: "helius-other-header-000000000000" };
const TWILIO = { current: "twilio-new-secondary-token-0123", previous: "twilio-old-primary-token-98765", other: "twilio-some-other-token-000000" };
const ADMIN = { user: "ops", current: "admin-new-password-0123456789", previous: "admin-old-password-9876543210", other: "admin-other-password-000000" };
const CALLBACK_URL = `https://alerts.example.com${CALLBACK_ROUTE}`;

const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`;
const delivery = JSON.parse(readFileSync(new URL("../fixtures/helius/sol-transfer.json", import.meta.url), "utf8")) as object[];

let logged: LoggedApp;
beforeAll(async () => {
  logged = await startLoggedApp(
    "previous-secret-values",
    {
      HELIUS_AUTH_HEADER: HELIUS.current,
      HELIUS_AUTH_HEADER_PREVIOUS: HELIUS.previous,
      TWILIO_ACCOUNT_SID: TEST_TWILIO.accountSid,
      TWILIO_AUTH_TOKEN: TWILIO.current,
      TWILIO_AUTH_TOKEN_PREVIOUS: TWILIO.previous,
      TWILIO_FROM: TEST_TWILIO.from,
      TWILIO_STATUS_CALLBACK_URL: CALLBACK_URL,
      ADMIN_USER: ADMIN.user,
      ADMIN_PASSWORD: ADMIN.current,
      ADMIN_PASSWORD_PREVIOUS: ADMIN.previous,
    },
    "info",
  );
});
afterAll(async () => {
  await logged.close();
});

describe("HELIUS_AUTH_HEADER_PREVIOUS", () => {
  const post = (authorization: string) =>
    logged.app.inject({ method: "POST", url: "/v1/ingest/helius", headers: { authorization }, payload: delivery });

  it("takes a delivery with the new header and one with the previous header; refuses any other with 401", async () => {
    expect((await post(HELIUS.current)).statusCode).toBe(202);
    expect((await post(HELIUS.previous)).statusCode).toBe(202);
    for (const authorization of [HELIUS.other, `${HELIUS.previous}x`, `${HELIUS.current},${HELIUS.previous}`]) {
      const refused = await post(authorization);
      expect(refused.statusCode, authorization).toBe(401);
      expect(refused.json()).toMatchObject({ code: "unauthorized" });
    }
  });
});

describe("TWILIO_AUTH_TOKEN_PREVIOUS", () => {
  const params = { AccountSid: TEST_TWILIO.accountSid, MessageSid: `SM${"ab".repeat(16)}`, MessageStatus: "delivered" };
  const post = (token: string) =>
    logged.app.inject({
      method: "POST",
      url: CALLBACK_ROUTE,
      headers: { "content-type": "application/x-www-form-urlencoded", "x-twilio-signature": twilio.getExpectedTwilioSignature(token, CALLBACK_URL, params) },
      payload: new URLSearchParams(params).toString(),
    });

  it("takes a status callback signed with the new token and one signed with the previous one; refuses one signed with any other with 403", async () => {
    expect((await post(TWILIO.current)).statusCode).toBe(204);
    expect((await post(TWILIO.previous)).statusCode).toBe(204);
    const refused = await post(TWILIO.other);
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({ code: "forbidden" });
  });
});

describe("ADMIN_PASSWORD_PREVIOUS", () => {
  it("opens /metrics and Bull Board with the new password and with the previous one, for ADMIN_USER only; refuses any other with 401", async () => {
    for (const url of ["/metrics", "/admin/queues/api/queues"]) {
      for (const password of [ADMIN.current, ADMIN.previous]) {
        expect((await logged.app.inject({ url, headers: { authorization: basic(ADMIN.user, password) } })).statusCode, `${url} ${password}`).toBe(200);
      }
      for (const authorization of [basic(ADMIN.user, ADMIN.other), basic("someone", ADMIN.previous), basic(ADMIN.user, `${ADMIN.previous}${ADMIN.current}`)]) {
        expect((await logged.app.inject({ url, headers: { authorization } })).statusCode, `${url} ${authorization}`).toBe(401);
      }
    }
  });

  it("opens a worker's /metrics with the new password and with the previous one; refuses any other with 401", async () => {
    const admin = logged.deps.config.admin;
    const server = await startMetricsServer(new Registry(), 0, admin, "127.0.0.1");
    try {
      const scrape = async (password: string) =>
        (await fetch(`http://127.0.0.1:${server.port}/metrics`, { headers: { authorization: basic(ADMIN.user, password) } })).status;
      expect(await scrape(ADMIN.current)).toBe(200);
      expect(await scrape(ADMIN.previous)).toBe(200);
      expect(await scrape(ADMIN.other)).toBe(401);
    } finally {
      await server.close();
    }
  });
});

describe("the log", () => {
  it("says at start that each previous value is accepted, and carries none of the values, refused requests included", () => {
    const text = logged.lines.join("");
    for (const name of ["HELIUS_AUTH_HEADER_PREVIOUS", "TWILIO_AUTH_TOKEN_PREVIOUS", "ADMIN_PASSWORD_PREVIOUS"]) {
      const line = logged.lines.find((l) => l.includes(`${name} is set`));
      expect(line, name).toBeDefined();
      expect(JSON.parse(line!)).toMatchObject({ level: 30 });
    }
    for (const value of [...Object.values(HELIUS), TWILIO.current, TWILIO.previous, ADMIN.current, ADMIN.previous]) expect(text).not.toContain(value);
  });
});
