// A 400 says each problem once, in the service's words. A field that may be null (alias,
// source, mint) answered one bad value with three entries, ajv's: "must NOT have fewer than 1
// characters; must be null; must match a schema in anyOf", the second telling the caller to
// send null. Others showed ajv's wording through: "must NOT have fewer than 1 characters" for
// ?walletId=, "items ## 1 and 0 are identical" for a tag given twice, "must be <= 604800".
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { auth, insertWallet, problem } from "../helpers/alert-fixtures.ts";
import { randomAddress } from "../helpers/chain.ts";
import { makeTransaction } from "../helpers/seed.ts";

let t: TestApp;
let headers: Record<string, string>;
let walletId: string;
let alertId: string;
const OWNER = "wording-caller";

beforeAll(async () => {
  t = await startTestApp("validation-messages");
  headers = auth(await t.token(OWNER));
  ({ walletId } = await insertWallet(t, OWNER));
  const created = await t.app.inject({
    method: "POST",
    url: "/v1/risk/alerts",
    headers,
    payload: { walletId, condition: "unusual_activity", notificationMethod: "webhook", webhookUrl: "http://127.0.0.1:9/hook" },
  });
  alertId = created.json().alertId;
});
afterAll(async () => {
  await t.close();
});

type Answer = Awaited<ReturnType<TestApp["app"]["inject"]>>;

/** The 400's errors as "path message" lines, after checking that its detail says exactly those. */
function errorLines(res: Answer): string[] {
  const body = problem(res, 400, "validation_failed");
  const lines = (body.errors ?? []).map((e) => `${e.path} ${e.message}`);
  expect(body.detail).toBe(lines.join("; "));
  return lines;
}

const send = (method: "POST" | "PUT" | "DELETE" | "PATCH", url: string, payload: unknown) =>
  t.app.inject({ method, url, headers, payload: payload as object });
const get = (url: string) => t.app.inject({ url, headers });

describe("a field that may be null, given a value that is neither right nor null", () => {
  it.each([
    ["an empty alias", { alias: "" }, "body.alias must not be empty: send null for none"],
    ["an alias that is a number", { alias: 5 }, "body.alias must be a string or null"],
    ["an alias over 64 characters", { alias: "x".repeat(65) }, "body.alias must be at most 64 characters or null"],
  ])("answers %s with one entry that says what is wrong", async (_name, fields, line) => {
    expect(errorLines(await send("POST", "/v1/wallets", { address: randomAddress(), ...fields }))).toEqual([line]);
  });

  it("says so of a label's source, on PUT and DELETE", async () => {
    const put = await send("PUT", "/v1/risk/labels", { labels: [{ address: randomAddress(), category: "mixer", score: 80, source: "" }] });
    expect(errorLines(put)).toEqual(["body.labels.0.source must not be empty: send null for none"]);
    const remove = await send("DELETE", "/v1/risk/labels", { addresses: [randomAddress()], source: 5 });
    expect(errorLines(remove)).toEqual(["body.source must be a string or null"]);
  });

  it("says so of an ingested transaction's mint", async () => {
    const res = await send("POST", "/v1/ingest/transactions", { transactions: [makeTransaction({ mint: "notamint" } as never)] });
    expect(errorLines(res)).toEqual(["body.transactions.0.mint must be a Solana address (base58 of 32 bytes) or null"]);
  });

  it("still accepts null and a right value", async () => {
    for (const alias of [null, "Treasury"]) {
      const res = await send("POST", "/v1/wallets", { address: randomAddress(), alias });
      expect(res.statusCode, res.body).toBe(201);
    }
  });
});

describe("the service's own words, not ajv's", () => {
  it.each([
    [`/v1/transactions?walletId=`, "query.walletId must not be empty"],
    [`/v1/risk/alerts?walletId=`, "query.walletId must not be empty"],
    ["/v1/risk/alerts/{alertId}/events?after=", "query.after must not be empty"],
  ])("refuses the empty value of %s as empty", async (url, line) => {
    expect(errorLines(await get(url.replace("{alertId}", alertId)))).toEqual([line]);
  });

  it("names the repeated tag and the one it repeats", async () => {
    const res = await send("PATCH", `/v1/wallets/${walletId}`, { tags: ["ops", "cold", "ops"] });
    expect(errorLines(res)).toEqual(["body.tags.2 is the same as item 0; give each item once"]);
  });

  it("refuses an empty token filter as empty", async () => {
    const res = await send("POST", "/v1/risk/alerts", {
      walletId,
      condition: "large_transfer",
      threshold: 10,
      token: "",
      notificationMethod: "webhook",
      webhookUrl: "http://127.0.0.1:9/hook",
    });
    expect(errorLines(res)).toEqual(["body.token must not be empty"]);
  });

  it.each([604_801, -5, 1.5])("tells a cooldownSeconds of %d its range", async (cooldownSeconds) => {
    expect(errorLines(await send("PATCH", `/v1/risk/alerts/${alertId}`, { cooldownSeconds }))).toEqual([
      "body.cooldownSeconds must be a whole number from 0 to 604800",
    ]);
  });

  it("tells a label's score its range", async () => {
    const res = await send("PUT", "/v1/risk/labels", { labels: [{ address: randomAddress(), category: "mixer", score: 101 }] });
    expect(errorLines(res)).toEqual(["body.labels.0.score must be a whole number from 0 to 100"]);
  });

  it.each([
    ["a time without a time zone", "2026-11-01T00:00:00"],
    ["words", "yesterday"],
    ["a month that does not exist", "2026-13-01T00:00:00Z"],
  ])("tells a redelivery window's since given %s that it needs a date-time with a time zone, and an example", async (_name, since) => {
    const res = await send("POST", `/v1/risk/alerts/${alertId}/notifications/redeliver`, { since });
    expect(errorLines(res)).toEqual(["body.since must be a date-time with a time zone (such as 2026-11-20T00:00:00Z)"]);
  });

  it("tells a list its bounds: an empty batch, a batch too long, too many tags", async () => {
    expect(errorLines(await send("POST", "/v1/ingest/transactions", { transactions: [] }))).toEqual(["body.transactions must list 1 to 1000 items"]);
    const tooMany = Array.from({ length: 1001 }, () => makeTransaction());
    expect(errorLines(await send("POST", "/v1/ingest/transactions", { transactions: tooMany }))).toEqual(["body.transactions must list 1 to 1000 items"]);
    const tags = Array.from({ length: 21 }, (_, i) => `t${i}`);
    expect(errorLines(await send("PATCH", `/v1/wallets/${walletId}`, { tags }))).toEqual(["body.tags must list at most 20 items"]);
  });

  it.each([
    ["tags given as a string", "POST", "/v1/wallets", () => ({ address: randomAddress(), tags: "ops" }), "body.tags must be an array"],
    ["a tag that is a number", "POST", "/v1/wallets", () => ({ address: randomAddress(), tags: [5] }), "body.tags.0 must be a string"],
    ["an alert given as a list", "POST", "/v1/risk/alerts", () => [], "body must be an object"],
    ["a threshold given as a string", "PATCH", "/v1/risk/alerts/{alertId}", () => ({ threshold: "5" }), "body.threshold must be a number"],
  ] as const)("names the type %s must have", async (_name, method, url, payload, line) => {
    expect(errorLines(await send(method, url.replace("{alertId}", alertId), payload()))).toEqual([line]);
  });

  it("tells an empty Idempotency-Key once that it is empty", async () => {
    const res = await t.app.inject({
      method: "POST",
      url: "/v1/risk/alerts",
      headers: { ...headers, "idempotency-key": "" },
      payload: { walletId, condition: "unusual_activity", notificationMethod: "webhook", webhookUrl: "http://127.0.0.1:9/hook" },
    });
    expect(errorLines(res)).toEqual(["headers.idempotency-key must not be empty"]);
    // A key with a character outside visible ASCII is still told what a key is.
    const spaced = await t.app.inject({
      method: "POST",
      url: "/v1/risk/alerts",
      headers: { ...headers, "idempotency-key": "a b" },
      payload: { walletId, condition: "unusual_activity", notificationMethod: "webhook", webhookUrl: "http://127.0.0.1:9/hook" },
    });
    expect(errorLines(spaced)).toEqual([
      "headers.idempotency-key must be a key of 1-255 visible ASCII characters, chosen by the client per create (a UUID will do)",
    ]);
  });

  it("says how long a text may be", async () => {
    const res = await send("PATCH", `/v1/risk/alerts/${alertId}`, { webhookUrl: `https://hooks.example/${"x".repeat(2048)}` });
    expect(errorLines(res)).toEqual(["body.webhookUrl must be at most 2048 characters"]);
  });
});
