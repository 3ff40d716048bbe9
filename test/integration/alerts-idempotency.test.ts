// POST /v1/risk/alerts with an Idempotency-Key: a client that lost the answer to a create sends
// it again and gets the alert the first request made, not a second alert that fires and
// notifies twice.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { auth, insertWallet } from "../helpers/alert-fixtures.ts";

let t: TestApp;
let alice: string;
let bob: string;
let walletId: string;
let bobsWalletId: string;

beforeAll(async () => {
  t = await startTestApp("alerts-idempotency");
  alice = await t.token("alice");
  bob = await t.token("bob");
  ({ walletId } = await insertWallet(t, "alice"));
  ({ walletId: bobsWalletId } = await insertWallet(t, "bob"));
});
afterAll(async () => {
  await t.close();
});

const HOOK = "http://127.0.0.1:9999/hooks/risk";
const create = (payload: Record<string, unknown>, key: string | undefined, bearer = alice) =>
  t.app.inject({
    method: "POST",
    url: "/v1/risk/alerts",
    headers: { ...auth(bearer), ...(key === undefined ? {} : { "idempotency-key": key }) },
    payload,
  });
const alertsOf = async (wallet: string, bearer = alice) =>
  (await t.app.inject({ url: `/v1/risk/alerts?walletId=${wallet}`, headers: auth(bearer) })).json().total as number;

describe("Idempotency-Key on POST /v1/risk/alerts", () => {
  it("answers a repeated create with the first one's alert, webhook secret included, and creates one alert", async () => {
    const body = { walletId, condition: "large_transfer", threshold: 1000, notificationMethod: "webhook", webhookUrl: HOOK };
    const before = await alertsOf(walletId);
    const first = await create(body, "create-1");
    const retry = await create({ ...body }, "create-1");
    expect(first.statusCode).toBe(201);
    expect(retry.statusCode).toBe(201);
    expect(retry.json()).toEqual(first.json());
    expect(retry.json().webhookSecret).toMatch(/^whsec_/);
    expect(retry.headers.location).toBe(first.headers.location);
    expect(retry.headers["idempotent-replayed"]).toBe("true");
    expect(first.headers["idempotent-replayed"]).toBeUndefined();
    expect(await alertsOf(walletId)).toBe(before + 1);
  });

  it("replays a create whose check would refuse it now: an email alert that relied on a claim the retry's token lacks", async () => {
    const body = { walletId, condition: "large_transfer", threshold: 500, notificationMethod: "email" };
    const first = await create(body, "create-claim", await t.token("alice", undefined, { email: "desk@fund.example" }));
    expect(first.statusCode, first.body).toBe(201);
    const before = await alertsOf(walletId);

    // The same caller, a token without the claim: a fresh create would be a 400 (no recipient).
    const retry = await create(body, "create-claim", await t.token("alice"));

    expect(retry.statusCode, retry.body).toBe(201);
    expect(retry.json().alertId).toBe(first.json().alertId);
    expect(retry.json().recipient).toBe("desk@fund.example");
    expect(await alertsOf(walletId)).toBe(before);
  });

  it("treats the same fields in another order as the same request", async () => {
    const first = await create({ walletId, condition: "unusual_activity", notificationMethod: "email", recipient: "a@example.com" }, "create-2");
    const retry = await create({ recipient: "a@example.com", notificationMethod: "email", condition: "unusual_activity", walletId }, "create-2");
    expect(retry.statusCode).toBe(201);
    expect(retry.json().alertId).toBe(first.json().alertId);
  });

  it("creates one alert from simultaneous requests under one key, and answers each of them with it", async () => {
    const body = { walletId, condition: "risk_score_increase", notificationMethod: "email", recipient: "a@example.com" };
    const before = await alertsOf(walletId);
    const answers = await Promise.all(Array.from({ length: 5 }, () => create(body, "create-3")));
    expect(answers.map((res) => res.statusCode)).toEqual([201, 201, 201, 201, 201]);
    expect(new Set(answers.map((res) => res.json().alertId)).size).toBe(1);
    expect(await alertsOf(walletId)).toBe(before + 1);
  });

  it("refuses a key used for a different request with 409 naming the alert it made", async () => {
    const first = await create({ walletId, condition: "large_transfer", threshold: 10, notificationMethod: "email", recipient: "a@example.com" }, "create-4");
    const other = await create({ walletId, condition: "large_transfer", threshold: 20, notificationMethod: "email", recipient: "a@example.com" }, "create-4");
    expect(other.statusCode).toBe(409);
    expect(other.headers["content-type"]).toMatch(/^application\/problem\+json/);
    expect(other.json().detail).toContain(first.json().alertId);
    expect(other.headers.location).toBe(first.headers.location);
  });

  it("replays for a day only: an older key answers 409 with the alert's Location, and shows no secret", async () => {
    const first = await create({ walletId, condition: "large_transfer", threshold: 5, notificationMethod: "webhook", webhookUrl: HOOK }, "create-5");
    await t.deps.sql`update alerts set created_at = created_at - interval '25 hours' where id = ${first.json().alertId}`;
    const late = await create({ walletId, condition: "large_transfer", threshold: 5, notificationMethod: "webhook", webhookUrl: HOOK }, "create-5");
    expect(late.statusCode).toBe(409);
    expect(late.headers.location).toBe(first.headers.location);
    expect(late.body).not.toContain("whsec_");
  });

  it("refuses a replay after the secret was rotated with 409 and the alert's Location, and shows neither secret", async () => {
    const body = { walletId, condition: "large_transfer", threshold: 7, notificationMethod: "webhook", webhookUrl: HOOK };
    const first = await create(body, "create-6");
    expect(first.statusCode).toBe(201);
    const rotate = await t.app.inject({ method: "POST", url: `${first.headers.location}/rotate-secret`, headers: auth(alice) });
    expect(rotate.statusCode).toBe(200);

    const retry = await create({ ...body }, "create-6");
    expect(retry.statusCode).toBe(409);
    expect(retry.headers["content-type"]).toMatch(/^application\/problem\+json/);
    expect(retry.headers.location).toBe(first.headers.location);
    expect(retry.json().detail).toContain(first.json().alertId);
    expect(retry.json().detail).toContain("rotated");
    expect(retry.body).not.toContain("whsec_");
    expect(retry.headers["idempotent-replayed"]).toBeUndefined();
  });

  it("keeps each caller's keys apart", async () => {
    const mine = await create({ walletId, condition: "unusual_activity", notificationMethod: "email", recipient: "a@example.com" }, "shared-key");
    const theirs = await create({ walletId: bobsWalletId, condition: "unusual_activity", notificationMethod: "email", recipient: "b@example.com" }, "shared-key", bob);
    expect(mine.statusCode).toBe(201);
    expect(theirs.statusCode).toBe(201);
    expect(theirs.json().alertId).not.toBe(mine.json().alertId);
  });

  it("creates a new alert for each request without a key", async () => {
    const body = { walletId, condition: "unusual_activity", notificationMethod: "email", recipient: "a@example.com" };
    const before = await alertsOf(walletId);
    await create(body, undefined);
    await create(body, undefined);
    expect(await alertsOf(walletId)).toBe(before + 2);
  });

  it.each([
    ["a key with a space", "two words"],
    ["a key over 255 characters", "k".repeat(256)],
  ])("refuses %s with 400 naming the header", async (_name, key) => {
    const res = await create({ walletId, condition: "unusual_activity", notificationMethod: "email", recipient: "a@example.com" }, key);
    expect(res.statusCode).toBe(400);
    expect(res.json().errors[0].path).toBe("headers.idempotency-key");
  });
});
