// What a JSON body may be made of: an accepted request stores exactly the text that was
// sent, so bytes that are not UTF-8, another charset or a lone surrogate escape are refused
// (they would be stored as U+FFFD), never silently replaced; and a body nested deeper than any
// request, or holding more arrays and objects than its route can use, is refused before it is
// parsed.
import { Readable } from "node:stream";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_JSON_DEPTH } from "../../src/http/json-text-scan.ts";
import { MAX_BATCH_TRANSACTIONS } from "../../src/ingest/native.ts";
import { MAX_LABELS } from "../../src/http/routes/risk-labels.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { auth, fieldErrors, problem } from "../helpers/alert-fixtures.ts";
import { randomAddress } from "../helpers/chain.ts";
import { makeTransaction } from "../helpers/seed.ts";

let t: TestApp;
let headers: Record<string, string>;
beforeAll(async () => {
  t = await startTestApp("json-body");
  headers = auth(await t.token("json-caller"));
});
afterAll(async () => {
  await t.close();
});

const trackWallet = (payload: string | Buffer, contentType = "application/json", more: Record<string, string> = {}) =>
  t.app.inject({ method: "POST", url: "/v1/wallets", headers: { ...headers, "content-type": contentType, ...more }, payload });

const storedAliases = async () =>
  (await t.deps.sql<{ alias: string | null }[]>`select alias from tracked_wallets where owner = 'json-caller'`).map((row) => row.alias);

describe("a JSON body is UTF-8 text, stored as sent", () => {
  it("refuses a body whose bytes are not UTF-8 (a Latin-1 é) with a 400, and stores nothing", async () => {
    const latin1 = Buffer.concat([Buffer.from(`{"address":"${randomAddress()}","alias":"caf`), Buffer.from([0xe9]), Buffer.from('"}')]);
    const body = problem(await trackWallet(latin1), 400, "validation_failed");
    expect(body.detail).toMatch(/not valid UTF-8/);
    expect(body.errors).toEqual([{ path: "body", message: "is not valid UTF-8; send JSON as UTF-8" }]);
    expect(await storedAliases()).not.toContain("caf\ufffd");
  });

  it("refuses a charset other than UTF-8 with a 415 that says to send UTF-8", async () => {
    const payload = JSON.stringify({ address: randomAddress(), alias: "latin" });
    const body = problem(await trackWallet(payload, "application/json; charset=iso-8859-1"), 415, "unsupported_media_type");
    expect(body.detail).toMatch(/charset iso-8859-1 .*UTF-8/);
    expect(await storedAliases()).not.toContain("latin");
  });

  it("accepts UTF-8 however the charset parameter spells it, and stores the text as sent", async () => {
    for (const [contentType, alias] of [
      ["application/json; charset=utf-8", "café"],
      ['application/json;charset="UTF-8"', "naïve 🐋"],
    ] as const) {
      const res = await trackWallet(JSON.stringify({ address: randomAddress(), alias }), contentType);
      expect(res.statusCode, res.body).toBe(201);
      expect(res.json().alias).toBe(alias);
    }
    expect(await storedAliases()).toEqual(expect.arrayContaining(["café", "naïve 🐋"]));
  });

  it("refuses a lone surrogate escape with a 400 naming the field, in a value, an array item or a key", async () => {
    const address = randomAddress();
    expect(fieldErrors(await trackWallet(`{"address":"${address}","alias":"a\\ud800b"}`))).toEqual([
      "body.alias contains a lone UTF-16 surrogate escape (such as \\ud800), which is not a character and cannot be stored",
    ]);
    expect(fieldErrors(await trackWallet(`{"address":"${address}","tags":["ok","\\uDFFF"]}`))[0]).toMatch(/^body\.tags\.1 contains a lone/);
    expect(fieldErrors(await trackWallet(`{"address":"${address}","\\udc00":1}`))[0]).toMatch(/contains a lone UTF-16 surrogate/);
    const [row] = await t.deps.sql`select 1 from tracked_wallets where address = ${address}`;
    expect(row).toBeUndefined();
  });

  it("finds a lone surrogate as deep as a body may nest and names it, rather than calling the JSON bad", async () => {
    const depth = MAX_JSON_DEPTH;
    const res = await trackWallet(`${"[".repeat(depth)}"\\ud800"${"]".repeat(depth)}`);
    expect(problem(res, 400, "validation_failed").errors?.[0]?.path).toBe(`body${".0".repeat(depth)}`);
  });

  it("keeps an escaped surrogate pair as the character it spells", async () => {
    const res = await trackWallet(`{"address":"${randomAddress()}","alias":"whale \\ud83d\\udc0b"}`);
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().alias).toBe("whale 🐋");
    expect(await storedAliases()).toContain("whale 🐋");
  });

  it("refuses prototype keys as such, not as bad JSON, and bad JSON as before", async () => {
    for (const body of [`{"address":"${randomAddress()}","__proto__":{"admin":true}}`, `{"address":"${randomAddress()}","constructor":{"prototype":{"admin":true}}}`]) {
      const refused = problem(await trackWallet(body), 400, "validation_failed");
      expect(refused.detail).toContain("__proto__ or constructor.prototype key, which is refused for safety");
      expect(refused.errors).toEqual([{ path: "body", message: expect.stringContaining("refused for safety") }]);
    }
    const notJson = problem(await trackWallet("{"), 400, "validation_failed");
    expect(notJson.detail).toBe("the body is not valid JSON");
    // The place, as every other 400 names it (README: errors[].path names each offending place).
    expect(notJson.errors).toEqual([{ path: "body", message: "is not valid JSON" }]);
    const empty = problem(await trackWallet(""), 400, "validation_failed");
    expect(empty.detail).toBe("the body is empty; send a JSON document");
    expect(empty.errors).toEqual([{ path: "body", message: "is empty; send a JSON document" }]);
  });
});

describe("a body nested deeper than any request", () => {
  const arrays = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`;
  const TOO_DEEP = `nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep, far deeper than any request of this API`;

  it("refuses one level past the bound with a 400 naming the body, and stores nothing", async () => {
    const address = randomAddress();
    // The address's object is one level, so tags holding arrays MAX_JSON_DEPTH deep are one too many.
    const body = problem(await trackWallet(`{"address":"${address}","tags":${arrays(MAX_JSON_DEPTH)}}`), 400, "validation_failed");
    expect(body.detail).toBe(`the body ${TOO_DEEP}`);
    expect(body.errors).toEqual([{ path: "body", message: TOO_DEEP }]);
    const [row] = await t.deps.sql`select 1 from tracked_wallets where address = ${address}`;
    expect(row).toBeUndefined();
  });

  it("parses a body nested as deep as the bound, and answers it as its route does", async () => {
    const body = problem(await trackWallet(`{"address":"${randomAddress()}","tags":${arrays(MAX_JSON_DEPTH - 1)}}`), 400, "validation_failed");
    expect(body.errors?.[0]?.path).toBe("body.tags.0");
  });

  it("refuses the review's 1 MiB of nested arrays for its depth, not as bad JSON or too large", async () => {
    const body = problem(await trackWallet(arrays(500_000)), 400, "validation_failed");
    expect(body.errors).toEqual([{ path: "body", message: TOO_DEEP }]);
  });

  it("reads brackets in a string as text: a wallet whose alias is brackets is tracked", async () => {
    const alias = "[{".repeat(32);
    const res = await trackWallet(JSON.stringify({ address: randomAddress(), alias }));
    expect(res.statusCode, res.body).toBe(201);
    expect(await storedAliases()).toContain(alias);
  });

  it("refuses a native ingest batch holding one transaction nested too deep, and stores none of the batch", async () => {
    const [fine, deep] = [makeTransaction(), makeTransaction()];
    const payload = `{"transactions":[${JSON.stringify(fine)},${JSON.stringify(deep).replace(/}$/, `,"junk":${arrays(MAX_JSON_DEPTH)}}`)}]}`;
    const res = await t.app.inject({ method: "POST", url: "/v1/ingest/transactions", headers: { ...headers, "content-type": "application/json" }, payload });
    expect(problem(res, 400, "validation_failed").errors).toEqual([{ path: "body", message: TOO_DEEP }]);
    const rows = await t.deps.sql`select 1 from transactions where signature in ${t.deps.sql([fine.signature, deep.signature])}`;
    expect(rows).toHaveLength(0);
  });
});

describe("a body holding more arrays and objects than its route can use", () => {
  const TOO_MANY = /^holds more than (\d+) arrays and objects, far more than any request of this route$/;
  // The review's body: 1 MiB of small shallow arrays, never deeper than 5, 416,001 of them.
  const shallowArrays = (bytes: number) => `[${Array(Math.floor(bytes / 10) - 1).fill("[[[[0]]]]").join(",")}]`;
  const ingest = (url: string, payload: string) =>
    t.app.inject({ method: "POST", url, headers: { ...headers, "content-type": "application/json" }, payload });
  /** The bound a refusal names, checked to be the one refusal of the body. */
  const refusedBound = (res: Awaited<ReturnType<typeof trackWallet>>): number => {
    const body = problem(res, 400, "validation_failed");
    expect(body.errors).toEqual([{ path: "body", message: expect.stringMatching(TOO_MANY) }]);
    expect(body.detail).toBe(`the body ${body.errors![0]!.message}`);
    return Number(TOO_MANY.exec(body.errors![0]!.message)![1]);
  };

  it("refuses the review's 1 MiB of shallow arrays on a customer route with a 400 naming the body, its bound a few dozen", async () => {
    const payload = shallowArrays(1024 * 1024);
    expect(payload.length).toBeLessThanOrEqual(1024 * 1024);
    expect(refusedBound(await trackWallet(payload))).toBeLessThan(100);
  });

  it("refuses them on a route that takes no body too, and deletes nothing", async () => {
    const { walletId } = (await trackWallet(JSON.stringify({ address: randomAddress() }))).json();
    const res = await t.app.inject({
      method: "DELETE",
      url: `/v1/wallets/${walletId}`,
      headers: { ...headers, "content-type": "application/json" },
      payload: shallowArrays(1024 * 1024),
    });
    expect(refusedBound(res)).toBeLessThan(100);
    const [row] = await t.deps.sql`select 1 from tracked_wallets where id = ${walletId}`;
    expect(row).toBeDefined();
  });

  it("refuses one array past the bound and answers one at the bound as the route does", async () => {
    const bound = refusedBound(await trackWallet(shallowArrays(1024 * 1024)));
    // The body's object and its tags are two: tags holding bound - 2 empty arrays make the bound.
    const tags = (count: number) => JSON.stringify({ address: randomAddress(), tags: Array.from({ length: count }, () => []) });
    expect(refusedBound(await trackWallet(tags(bound - 1)))).toBe(bound);
    const atBound = problem(await trackWallet(tags(bound - 2)), 400, "validation_failed");
    expect(atBound.errors?.map((e) => e.path)).toContain("body.tags");
  });

  it("leaves a body a little off to the route's own words: an unknown field holding objects", async () => {
    const payload = JSON.stringify({ address: randomAddress(), extra: { a: { b: [{}, {}] } } });
    const body = problem(await trackWallet(payload), 400, "validation_failed");
    expect(body.errors?.[0]?.path).toBe("body.extra");
  });

  it("refuses 10 MiB of shallow arrays on an ingest route, bounded by its batch size", async () => {
    const payload = `{"transactions":${shallowArrays(10 * 1024 * 1024 - 20)}}`;
    const bound = refusedBound(await ingest("/v1/ingest/transactions", payload));
    expect(bound).toBeGreaterThan(MAX_BATCH_TRANSACTIONS);
    expect(bound).toBeLessThan(3 * MAX_BATCH_TRANSACTIONS);
  });

  it("stores a full native ingest batch and a full labels PUT, and still answers a batch too long with its limit", async () => {
    const transactions = Array.from({ length: MAX_BATCH_TRANSACTIONS }, () => makeTransaction());
    const stored = await ingest("/v1/ingest/transactions", JSON.stringify({ transactions }));
    expect(stored.statusCode, stored.body).toBe(202);
    expect(stored.json()).toEqual({ accepted: MAX_BATCH_TRANSACTIONS, duplicates: 0 });

    const labels = Array.from({ length: MAX_LABELS }, () => ({ address: randomAddress(), category: "scam", score: 50, source: "container-bound" }));
    const put = (payload: object) =>
      t.app.inject({ method: "PUT", url: "/v1/risk/labels", headers: { ...headers, "content-type": "application/json" }, payload: JSON.stringify(payload) });
    const upserted = await put({ labels });
    expect(upserted.statusCode, upserted.body).toBe(200);
    expect(upserted.json()).toEqual({ upserted: MAX_LABELS, changed: MAX_LABELS, loadId: expect.stringMatching(/^lld_/) });

    const tooLong = problem(await put({ labels: [...labels, { address: randomAddress(), category: "scam", score: 50 }] }), 400, "validation_failed");
    expect(tooLong.errors?.[0]?.path).toBe("body.labels");
  });
});

describe("a body is read as sent, never decompressed", () => {
  it("refuses a gzip body with a 415 that names the encoding, not a 400 calling it bad JSON", async () => {
    const payload = gzipSync(JSON.stringify({ address: randomAddress(), alias: "zipped" }));
    const body = problem(await trackWallet(payload, "application/json", { "content-encoding": "gzip" }), 415, "unsupported_media_type");
    expect(body.detail).toBe("Content-Encoding gzip is not accepted; send the JSON uncompressed");
  });

  it("refuses a plain body labelled as compressed, and stores nothing", async () => {
    const payload = JSON.stringify({ address: randomAddress(), alias: "labelled-br" });
    problem(await trackWallet(payload, "application/json", { "content-encoding": "br" }), 415, "unsupported_media_type");
    expect(await storedAliases()).not.toContain("labelled-br");
  });

  it("accepts Content-Encoding: identity", async () => {
    const res = await trackWallet(JSON.stringify({ address: randomAddress(), alias: "identity" }), "application/json", { "content-encoding": "identity" });
    expect(res.statusCode, res.body).toBe(201);
  });
});

describe("a route that takes no body, called with Content-Type: application/json and nothing after it", () => {
  const bodiless = (method: "DELETE" | "POST", url: string) =>
    t.app.inject({ method, url, headers: { ...headers, "content-type": "application/json", "content-length": "0" }, payload: "" });

  it("tests, rotates the secret of and deletes an alert, and deletes a wallet", async () => {
    const wallet = (await trackWallet(JSON.stringify({ address: randomAddress() }))).json();
    const created = await t.app.inject({
      method: "POST",
      url: "/v1/risk/alerts",
      headers,
      payload: { walletId: wallet.walletId, condition: "unusual_activity", notificationMethod: "webhook", webhookUrl: "http://127.0.0.1:9/hook" },
    });
    const { alertId } = created.json();
    expect((await bodiless("POST", `/v1/risk/alerts/${alertId}/test`)).statusCode).toBe(202);
    expect((await bodiless("POST", `/v1/risk/alerts/${alertId}/rotate-secret`)).statusCode).toBe(200);
    expect((await bodiless("DELETE", `/v1/risk/alerts/${alertId}`)).statusCode).toBe(204);
    expect((await bodiless("DELETE", `/v1/wallets/${wallet.walletId}`)).statusCode).toBe(204);
    const [row] = await t.deps.sql`select 1 from tracked_wallets where id = ${wallet.walletId}`;
    expect(row).toBeUndefined();
  });

  it("still answers an empty body on a route that needs one with a 400", async () => {
    const res = await t.app.inject({ method: "POST", url: "/v1/risk/alerts", headers: { ...headers, "content-type": "application/json" }, payload: "" });
    expect(problem(res, 400, "validation_failed").detail).toBe("the body is empty; send a JSON document");
  });
});

describe("a route that takes no body, called with an empty body of another media type", () => {
  // curl -X DELETE … -d '' sends Content-Type: application/x-www-form-urlencoded and nothing more.
  const emptyAs = (method: "DELETE" | "POST", url: string, contentType: string, more: Record<string, string> = { "content-length": "0" }) =>
    t.app.inject({ method, url, headers: { ...headers, "content-type": contentType, ...more }, payload: "" });
  const FORM = "application/x-www-form-urlencoded";

  it("tests, rotates the secret of and deletes an alert, and deletes a wallet, whatever the Content-Type", async () => {
    const wallet = (await trackWallet(JSON.stringify({ address: randomAddress() }))).json();
    const created = await t.app.inject({
      method: "POST",
      url: "/v1/risk/alerts",
      headers,
      payload: { walletId: wallet.walletId, condition: "unusual_activity", notificationMethod: "webhook", webhookUrl: "http://127.0.0.1:9/hook" },
    });
    const { alertId } = created.json();
    expect((await emptyAs("POST", `/v1/risk/alerts/${alertId}/test`, FORM)).statusCode).toBe(202);
    expect((await emptyAs("POST", `/v1/risk/alerts/${alertId}/rotate-secret`, "text/plain")).statusCode).toBe(200);
    expect((await emptyAs("DELETE", `/v1/risk/alerts/${alertId}`, "text/plain; charset=utf-8")).statusCode).toBe(204);
    expect((await emptyAs("DELETE", `/v1/wallets/${wallet.walletId}`, FORM)).statusCode).toBe(204);
    const [row] = await t.deps.sql`select 1 from tracked_wallets where id = ${wallet.walletId}`;
    expect(row).toBeUndefined();
  });

  it("takes an empty chunked body as empty", async () => {
    const { walletId } = (await trackWallet(JSON.stringify({ address: randomAddress() }))).json();
    const res = await emptyAs("DELETE", `/v1/wallets/${walletId}`, FORM, { "transfer-encoding": "chunked" });
    expect(res.statusCode, res.body).toBe(204);
  });

  it("answers a wallet that does not exist with 404, not 415", async () => {
    problem(await emptyAs("DELETE", "/v1/wallets/wal_00000000000000000000000000", FORM), 404, "not_found");
  });

  it("still refuses a body of another media type that is not empty with 415, and deletes nothing", async () => {
    const { walletId } = (await trackWallet(JSON.stringify({ address: randomAddress() }))).json();
    for (const [contentType, payload] of [[FORM, "keepAlerts=true"], ["text/plain", "x"]] as const) {
      const res = await t.app.inject({ method: "DELETE", url: `/v1/wallets/${walletId}`, headers: { ...headers, "content-type": contentType }, payload });
      expect(problem(res, 415, "unsupported_media_type").detail).toBe(`Content-Type ${contentType} is not accepted; send application/json`);
    }
    // Chunked, with no Content-Length to tell it is not empty.
    const chunked = await t.app.inject({
      method: "DELETE",
      url: `/v1/wallets/${walletId}`,
      headers: { ...headers, "content-type": FORM, "transfer-encoding": "chunked" },
      payload: Readable.from([Buffer.from("keepAlerts=true")]),
    });
    problem(chunked, 415, "unsupported_media_type");
    const [row] = await t.deps.sql`select 1 from tracked_wallets where id = ${walletId}`;
    expect(row).toBeDefined();
  });

  it("still refuses an empty body of another media type with 415 on a route that takes a body", async () => {
    problem(await emptyAs("POST", "/v1/wallets", FORM), 415, "unsupported_media_type");
  });

  it("still answers a text body sent to no route with 404", async () => {
    const res = await t.app.inject({ method: "POST", url: "/v1/nowhere", headers: { ...headers, "content-type": "text/plain" }, payload: "x" });
    expect(problem(res, 404, "not_found").detail).toBe("no route for POST /v1/nowhere");
  });
});

describe("a DELETE that carries fields in a JSON body", () => {
  const deleteWithBody = (url: string, payload: string) =>
    t.app.inject({ method: "DELETE", url, headers: { ...headers, "content-type": "application/json" }, payload });
  const read = async (url: string) => (await t.app.inject({ method: "GET", url, headers })).statusCode;
  const createAlert = async (walletId: string) =>
    (
      await t.app.inject({
        method: "POST",
        url: "/v1/risk/alerts",
        headers,
        payload: { walletId, condition: "unusual_activity", notificationMethod: "webhook", webhookUrl: "http://127.0.0.1:9/hook" },
      })
    ).json().alertId as string;

  it("refuses to delete a wallet with a 400 rather than ignore {\"keepAlerts\": true}, and keeps the wallet and its alert", async () => {
    const { walletId } = (await trackWallet(JSON.stringify({ address: randomAddress() }))).json();
    const alertId = await createAlert(walletId);
    const refused = await deleteWithBody(`/v1/wallets/${walletId}`, '{"keepAlerts":true}');
    expect(refused.statusCode, "the DELETE went ahead").toBe(400);
    expect(fieldErrors(refused)).toEqual([
      "body must be empty: this endpoint takes no fields",
    ]);
    expect(await read(`/v1/wallets/${walletId}`)).toBe(200);
    expect(await read(`/v1/risk/alerts/${alertId}`)).toBe(200);
    expect((await deleteWithBody(`/v1/wallets/${walletId}`, "")).statusCode).toBe(204);
    expect(await read(`/v1/wallets/${walletId}`)).toBe(404);
  });

  it("refuses to delete an alert with a 400 rather than ignore its body's fields, and keeps the alert", async () => {
    const { walletId } = (await trackWallet(JSON.stringify({ address: randomAddress() }))).json();
    const alertId = await createAlert(walletId);
    const refused = await deleteWithBody(`/v1/risk/alerts/${alertId}`, '{"keepEvents":true}');
    expect(refused.statusCode, "the DELETE went ahead").toBe(400);
    expect(fieldErrors(refused)).toEqual([
      "body must be empty: this endpoint takes no fields",
    ]);
    expect(await read(`/v1/risk/alerts/${alertId}`)).toBe(200);
    expect((await deleteWithBody(`/v1/risk/alerts/${alertId}`, "")).statusCode).toBe(204);
    expect(await read(`/v1/risk/alerts/${alertId}`)).toBe(404);
  });
});
