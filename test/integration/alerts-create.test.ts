import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ALL_SCOPES, startTestApp, type TestApp } from "../helpers/app.ts";
import { auth, fieldErrors, insertWallet, problem, setRiskScore, storedAlert } from "../helpers/alert-fixtures.ts";
import { randomAddress } from "../helpers/chain.ts";

let t: TestApp;
let token: string;
let walletId: string;
let address: string;

beforeAll(async () => {
  t = await startTestApp("alerts-create");
  token = await t.token("alice");
  ({ walletId, address } = await insertWallet(t, "alice"));
});
afterAll(async () => {
  await t.close();
});

const create = async (payload: Record<string, unknown>, bearer = token) =>
  t.app.inject({ method: "POST", url: "/v1/risk/alerts", headers: auth(bearer), payload });

const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const HOOK = "http://127.0.0.1:9999/hooks/risk";

describe("POST /v1/risk/alerts", () => {
  it("answers 201 with every field of the risk alert object, a Location and a one-time webhook secret", async () => {
    const res = await create({ walletId, condition: "large_transfer", threshold: 1000, notificationMethod: "webhook", webhookUrl: HOOK });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body).toEqual({
      alertId: expect.stringMatching(/^alr_[0-9a-z]{26}$/),
      walletId,
      condition: "large_transfer",
      status: "active",
      createdAt: expect.stringMatching(ISO_UTC),
      threshold: 1000,
      notificationMethod: "webhook",
      webhookUrl: HOOK,
      recipient: null,
      cooldownSeconds: 0,
      token: null,
      windowSeconds: null,
      ignoreOwnWallets: false,
      disabledReason: null,
      webhookSecret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]+=*$/),
    });
    expect(res.headers.location).toBe(`/v1/risk/alerts/${body.alertId}`);
    expect(Math.abs(Date.parse(body.createdAt) - Date.now())).toBeLessThan(60_000);
    const key = Buffer.from(body.webhookSecret.slice("whsec_".length), "base64");
    expect(key.length).toBeGreaterThanOrEqual(24);
    expect(key.length).toBeLessThanOrEqual(32);
    // The secret the service signs with is the one shown.
    expect((await storedAlert(t, body.alertId))?.webhookSecret).toBe(body.webhookSecret);

    const read = await t.app.inject({ url: res.headers.location as string, headers: auth(token) });
    expect(read.statusCode).toBe(200);
    const { webhookSecret: _secret, ...withoutSecret } = body;
    expect(read.json()).toEqual(withoutSecret);
    expect(read.body).not.toContain("whsec_");
  });

  it("gives each webhook alert its own secret and an email alert none", async () => {
    const first = (await create({ walletId, condition: "large_transfer", threshold: 5, notificationMethod: "webhook", webhookUrl: HOOK })).json();
    const second = (await create({ walletId, condition: "large_transfer", threshold: 5, notificationMethod: "webhook", webhookUrl: HOOK })).json();
    expect(first.webhookSecret).not.toBe(second.webhookSecret);
    const email = await create({ walletId, condition: "large_transfer", threshold: 5, notificationMethod: "email", recipient: "ops@example.com" });
    expect(email.statusCode).toBe(201);
    expect(email.json()).not.toHaveProperty("webhookSecret");
    expect((await storedAlert(t, email.json().alertId))?.webhookSecret).toBeNull();
  });

  it("keeps the optional cooldownSeconds and token of a large_transfer alert", async () => {
    const res = await create({
      walletId,
      condition: "large_transfer",
      threshold: 250.5,
      token: "USDC",
      cooldownSeconds: 600,
      notificationMethod: "sms",
      recipient: "+14155554567",
    });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ threshold: 250.5, token: "USDC", cooldownSeconds: 600, recipient: "+14155554567", webhookUrl: null });
  });

  it.each([
    ["suspicious_counterparty", 75],
    ["unusual_activity", 5],
    ["risk_score_increase", 10],
  ])("stores the default threshold of %s (%d) when none is given", async (condition, threshold) => {
    const res = await create({ walletId, condition, notificationMethod: "webhook", webhookUrl: HOOK });
    expect(res.statusCode).toBe(201);
    expect(res.json().threshold).toBe(threshold);
    expect(Number((await storedAlert(t, res.json().alertId))?.threshold)).toBe(threshold);
  });

  it("starts a risk_score_increase alert from the address's current score, and from 0 without one", async () => {
    await setRiskScore(t, address, 42);
    const scored = await create({ walletId, condition: "risk_score_increase", notificationMethod: "webhook", webhookUrl: HOOK });
    expect((await storedAlert(t, scored.json().alertId))?.baselineScore).toBe(42);

    const fresh = await insertWallet(t, "alice");
    const unscored = await create({ walletId: fresh.walletId, condition: "risk_score_increase", notificationMethod: "webhook", webhookUrl: HOOK });
    expect((await storedAlert(t, unscored.json().alertId))?.baselineScore).toBe(0);

    const other = await create({ walletId, condition: "unusual_activity", notificationMethod: "webhook", webhookUrl: HOOK });
    expect((await storedAlert(t, other.json().alertId))?.baselineScore).toBeNull();
  });

  it("takes the recipient from the token's email claim, and from its phone_number claim for sms", async () => {
    const withClaims = await t.token("alice", ALL_SCOPES, { email: "alice@example.com", phone: "+447400123456" });
    const email = await create({ walletId, condition: "large_transfer", threshold: 1, notificationMethod: "email" }, withClaims);
    expect(email.statusCode).toBe(201);
    expect(email.json().recipient).toBe("alice@example.com");
    const sms = await create({ walletId, condition: "large_transfer", threshold: 1, notificationMethod: "sms" }, withClaims);
    expect(sms.json().recipient).toBe("+447400123456");
    const given = await create({ walletId, condition: "large_transfer", threshold: 1, notificationMethod: "email", recipient: "ops@example.com" }, withClaims);
    expect(given.json().recipient).toBe("ops@example.com");
  });

  it("answers 400 naming the recipient when there is neither a recipient nor a claim", async () => {
    const email = await create({ walletId, condition: "large_transfer", threshold: 1, notificationMethod: "email" });
    expect(fieldErrors(email)).toEqual([expect.stringMatching(/^body\.recipient is required for email alerts.*email claim/)]);
    const sms = await create({ walletId, condition: "large_transfer", threshold: 1, notificationMethod: "sms" });
    expect(fieldErrors(sms)).toEqual([expect.stringMatching(/^body\.recipient is required for sms alerts.*phone_number claim/)]);
  });

  it("answers 404 for an unknown wallet and for another caller's wallet", async () => {
    const bobs = await insertWallet(t, "bob");
    for (const id of ["wal_00000000000000000000000000", bobs.walletId]) {
      const res = await create({ walletId: id, condition: "large_transfer", threshold: 1, notificationMethod: "webhook", webhookUrl: HOOK });
      expect(problem(res, 404, "not_found").detail).toContain(id);
    }
  });
});

describe("POST /v1/risk/alerts validation", () => {
  const valid = () => ({ walletId, condition: "large_transfer", threshold: 1000, notificationMethod: "webhook", webhookUrl: HOOK });
  const without = (field: string) => Object.fromEntries(Object.entries(valid()).filter(([key]) => key !== field));

  it.each(["walletId", "condition", "notificationMethod"])("requires %s", async (field) => {
    expect(fieldErrors(await create(without(field)))).toContain(`body.${field} is required`);
  });

  it.each([
    ["condition", "huge_transfer", "body.condition must be one of risk_score_increase, unusual_activity, large_transfer, suspicious_counterparty"],
    ["notificationMethod", "pigeon", "body.notificationMethod must be one of email, webhook, sms"],
  ])("refuses an unknown %s", async (field, value, error) => {
    expect(fieldErrors(await create({ ...valid(), [field]: value }))).toContain(error);
  });

  it('refuses "threshold": "1000" instead of coercing the string', async () => {
    expect(fieldErrors(await create({ ...valid(), threshold: "1000" }))).toContain("body.threshold must be a number");
  });

  it("requires a threshold for large_transfer and says what it means", async () => {
    expect(fieldErrors(await create(without("threshold")))).toEqual([
      expect.stringMatching(/^body\.threshold is required for large_transfer alerts: an amount in the transaction's token units/),
    ]);
  });

  it.each([
    ["large_transfer", 0],
    ["large_transfer", -5],
    ["large_transfer", 1e19],
    ["suspicious_counterparty", -1],
    ["suspicious_counterparty", 100.5],
    ["unusual_activity", 0],
    ["unusual_activity", 2_000_000],
    ["risk_score_increase", 0],
    ["risk_score_increase", 0.5],
    ["risk_score_increase", 101],
  ])("refuses the out-of-range %s threshold %d", async (condition, threshold) => {
    const errors = fieldErrors(await create({ ...valid(), condition, threshold }));
    expect(errors).toEqual([expect.stringMatching(new RegExp(`^body\\.threshold must be .* for ${condition} alerts$`))]);
  });

  it.each([1.5, 99.9, 10.000000001])("refuses a risk_score_increase threshold of %d: a risk score rises in whole points", async (threshold) => {
    expect(fieldErrors(await create({ ...valid(), condition: "risk_score_increase", threshold }))).toEqual([
      "body.threshold must be a whole number of points from 1 to 100 (a rise of the risk score) for risk_score_increase alerts",
    ]);
  });

  it.each([
    ["large_transfer", 0.000000001],
    ["suspicious_counterparty", 0],
    ["suspicious_counterparty", 100],
    ["unusual_activity", 1.5],
    ["risk_score_increase", 1],
    ["risk_score_increase", 100],
  ])("accepts the %s threshold %d at the edge of its range", async (condition, threshold) => {
    const res = await create({ ...valid(), condition, threshold });
    expect(res.statusCode).toBe(201);
    expect(res.json().threshold).toBe(threshold);
  });

  it("refuses a webhookUrl with email or sms alerts", async () => {
    for (const [method, recipient] of [["email", "ops@example.com"], ["sms", "+14155554567"]]) {
      const errors = fieldErrors(await create({ ...valid(), notificationMethod: method, recipient }));
      expect(errors).toEqual([`body.webhookUrl is only used by webhook alerts, not ${method}`]);
    }
  });

  it("requires a webhookUrl for webhook alerts", async () => {
    expect(fieldErrors(await create(without("webhookUrl")))).toEqual(["body.webhookUrl is required for webhook alerts"]);
  });

  it("refuses a recipient for a webhook alert", async () => {
    const errors = fieldErrors(await create({ ...valid(), recipient: "ops@example.com" }));
    expect(errors).toEqual([expect.stringMatching(/^body\.recipient is not used by webhook alerts/)]);
  });

  it.each(["555-1234", "15551234567", "+1 555 123 4567", "+05551234567"])("refuses the sms recipient %j as not E.164", async (recipient) => {
    const errors = fieldErrors(await create({ ...without("webhookUrl"), notificationMethod: "sms", recipient }));
    expect(errors).toEqual(["body.recipient must be an E.164 phone number such as +14155552671"]);
  });

  it.each(["alice", "alice@", "alice@@example.com", "+14155554567"])("refuses the email recipient %j", async (recipient) => {
    const errors = fieldErrors(await create({ ...without("webhookUrl"), notificationMethod: "email", recipient }));
    expect(errors).toEqual(["body.recipient must be an email address such as alice@example.com"]);
  });

  it("refuses an unknown field and names it", async () => {
    expect(fieldErrors(await create({ ...valid(), severity: "high" }))).toContain("body.severity is not a known field");
    expect(fieldErrors(await create({ ...valid(), webhookSecret: "whsec_mine" }))).toContain("body.webhookSecret is not a known field");
  });

  it.each([-1, 1.5, 604_801, "60"])("refuses cooldownSeconds %j", async (cooldownSeconds) => {
    expect(fieldErrors(await create({ ...valid(), cooldownSeconds })).some((e) => e.startsWith("body.cooldownSeconds"))).toBe(true);
  });

  it("accepts cooldownSeconds of a week", async () => {
    expect((await create({ ...valid(), cooldownSeconds: 604_800 })).json().cooldownSeconds).toBe(604_800);
  });

  it("refuses a token filter on other conditions and one longer than 64 characters", async () => {
    const other = await create({ ...valid(), condition: "unusual_activity", threshold: 3, token: "USDC" });
    expect(fieldErrors(other)).toEqual(["body.token is only used by large_transfer alerts"]);
    expect(fieldErrors(await create({ ...valid(), token: "x".repeat(65) })).some((e) => e.startsWith("body.token"))).toBe(true);
    expect(fieldErrors(await create({ ...valid(), token: "" })).some((e) => e.startsWith("body.token"))).toBe(true);
  });

  it("reports every problem of one body together", async () => {
    const res = await create({ walletId, condition: "large_transfer", notificationMethod: "email", webhookUrl: HOOK });
    const errors = fieldErrors(res).map((e) => e.split(" ")[0]);
    expect(errors.sort()).toEqual(["body.recipient", "body.threshold", "body.webhookUrl"]);
  });

  it("stores nothing when it refuses a body", async () => {
    const before = (await t.deps.sql`select count(*)::int as n from alerts`)[0]!.n;
    await create({ ...valid(), threshold: -1 });
    await create({ ...valid(), walletId: "wal_00000000000000000000000000" });
    expect((await t.deps.sql`select count(*)::int as n from alerts`)[0]!.n).toBe(before);
  });

  it("answers a wallet address in place of a walletId with 404, not 500", async () => {
    const res = await create({ ...valid(), walletId: randomAddress() });
    problem(res, 404, "not_found");
  });
});
