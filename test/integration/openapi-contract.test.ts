// The published OpenAPI document is a contract: a client generated from /v1/openapi.json
// alone, validating strictly what comes back, must never meet an answer it was not told
// about. A journey reaches every /v1 operation, with its successes and its documented
// errors, and every answer is checked against the document (see helpers/openapi-contract.ts):
// status listed, media type listed, required headers present, body valid against the
// schema. The last test requires every documented status of every operation to have been
// seen, so the document cannot promise what nothing here exercises.
import type { FastifyReply, FastifyRequest } from "fastify";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { mintToken } from "../../src/http/mint-token.ts";
import { NAMED_SCHEMAS } from "../../src/http/schema-components.ts";
import type { RunningWorkers } from "../../src/queue/run-workers.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { MINTS, randomAddress } from "../helpers/chain.ts";
import { createContractClient, startAppOnEmptyDatabase, startAppWithoutDatabase, type ContractClient, type Request } from "../helpers/contract-client.ts";
import { HELIUS_SECRET, HELIUS_WALLET, helius, sampleRequest } from "../helpers/contract-samples.ts";
import { TEST_JWT_SECRET } from "../helpers/env.ts";
import { createContract, registeredApiRoutes, type Contract, type OpenApiDocument } from "../helpers/openapi-contract.ts";
import { settled, startWorkers } from "../helpers/pipeline.ts";
import { makeTransaction } from "../helpers/seed.ts";
import { waitFor } from "../helpers/wait.ts";
import { startWebhookReceiver, type WebhookReceiver } from "../helpers/webhook-receiver.ts";

const TESTS_PER_HOUR = 4;
/** The alert journey's wallet holds exactly this many alerts, so its next create meets the cap. */
const ALERTS_PER_WALLET = 14;
const RATE_LIMIT_HEADERS = ["ratelimit-limit", "ratelimit-remaining", "ratelimit-reset"];
/** The 202s that queue one notification and name it in Location: a test, a redelivery. */
const SINGLE_NOTIFICATION_202S = ["POST /v1/risk/alerts/{alertId}/test", "POST /v1/notifications/{notificationId}/redeliver"];
const now = Math.floor(Date.now() / 1000);

let t: TestApp;
let workers: RunningWorkers;
let receiver: WebhookReceiver;
let document: OpenApiDocument;
let contract: Contract;
let client: ContractClient;
let alice: string;
let bob: string;

beforeAll(async () => {
  t = await startTestApp(
    "openapi-contract",
    { HELIUS_AUTH_HEADER: HELIUS_SECRET, TEST_NOTIFICATIONS_PER_HOUR: String(TESTS_PER_HOUR), MAX_ALERTS_PER_WALLET: String(ALERTS_PER_WALLET) },
    { beforeReady: (app) => app.addHook("preSerialization", checkBeforeSerialization) },
  );
  workers = startWorkers(t, ["transactions", "risk", "deliver-webhook"]);
  receiver = await startWebhookReceiver();
  document = (await t.app.inject({ url: "/v1/openapi.json" })).json<OpenApiDocument>();
  contract = createContract(document);
  client = createContractClient(contract);
  alice = await t.token("alice");
  bob = await t.token("bob");
});
afterAll(async () => {
  await workers?.close();
  await receiver?.close();
  await t?.close();
});
// Every answer a test received is checked; the test fails naming each that does not conform.
afterEach(() => {
  expect(client.takeViolations()).toEqual([]);
});

const call = (request: Request) => client.call(t.app, request);

/** Each value a handler returns is checked too, before the serializer can coerce it into shape. */
function checkBeforeSerialization(request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (error: null, payload: unknown) => void) {
  const route = request.routeOptions.url;
  // The document itself is read before there is a contract to check against.
  if (route !== undefined && contract !== undefined) {
    const contentType = reply.getHeader("content-type");
    client.report(contract.checkPayload(request.method, route, reply.statusCode, typeof contentType === "string" ? contentType : undefined, payload));
  }
  done(null, payload);
}

/** Calls and requires the status: the journey must really walk the path it claims to. */
async function expectStatus<T = Record<string, unknown>>(status: number, request: Request): Promise<T> {
  const res = await call(request);
  expect(res.statusCode, `${request.method} ${request.url}: ${res.body}`).toBe(status);
  return res.body === "" ? (undefined as T) : res.json<T>();
}

type Wallet = { walletId: string; address: string; riskScore: number; riskFactors: string[]; tokenAccounts: unknown[]; nfts: unknown[] };
type Alert = { alertId: string; webhookSecret?: string };

describe("every /v1 answer conforms to the published OpenAPI document", () => {
  it("documents every /v1 route the app registers, and no operation the app does not serve", () => {
    // The document leaves out itself and Twilio's status callback: neither is part of the API it
    // describes (Twilio's own documentation describes the callback's request).
    const undocumented = new Set(["GET /v1/openapi.json", "POST /v1/callbacks/twilio/sms-status"]);
    const registered = registeredApiRoutes(t.app.printRoutes({ commonPrefix: false })).filter((route) => !undocumented.has(route));
    expect(registered.length).toBeGreaterThan(10);
    expect([...contract.operations].sort()).toEqual(registered);
  });

  it("marks as required the headers the service always sends: Location on a 201 and on the 202 of a test or a redelivery, Retry-After on a 429 and a 503, WWW-Authenticate on a 401, X-Request-Id on every answer, RateLimit-* on every success of an operation that takes a token", () => {
    const alwaysSent = (key: string, status: string): string[] => [
      "x-request-id",
      ...(status === "201" || (status === "202" && SINGLE_NOTIFICATION_202S.includes(key)) ? ["location"] : []),
      ...(status === "429" || status === "503" ? ["retry-after"] : []),
      ...(status === "401" ? ["www-authenticate"] : []),
      ...(status.startsWith("2") && !contract.isPublic(key) ? RATE_LIMIT_HEADERS : []),
    ];
    const notRequired = contract.operations.flatMap((key) =>
      contract.statusesOf(key).flatMap((status) =>
        alwaysSent(key, status)
          .filter((name) => contract.headersOf(key, status)[name]?.required !== true)
          .map((name) => `${key} → ${status}: ${name}`),
      ),
    );
    expect(notRequired).toEqual([]);
  });

  it("declares RateLimit-* only where the limiter runs: not on the Helius webhook (no token, no limit), not on a 401 (refused before it)", () => {
    const declaredWhereNeverSent = contract.operations.flatMap((key) =>
      contract
        .statusesOf(key)
        .filter((status) => contract.isPublic(key) || status === "401")
        .flatMap((status) => RATE_LIMIT_HEADERS.filter((name) => contract.headersOf(key, status)[name]).map((name) => `${key} → ${status}: ${name}`)),
    );
    expect(declaredWhereNeverSent).toEqual([]);
    // The webhook is public in the document: otherwise the check above would check nothing.
    expect(contract.isPublic("POST /v1/ingest/helius")).toBe(true);
  });

  it("declares the Helius webhook's shared secret as its security, an API key in Authorization, which it answers 401 without", async () => {
    const schemes = (document as { components?: { securitySchemes?: Record<string, unknown> } }).components?.securitySchemes;
    expect(schemes?.heliusAuthHeader).toMatchObject({ type: "apiKey", in: "header", name: "Authorization" });
    expect(document.paths["/v1/ingest/helius"]?.post?.security).toEqual([{ heliusAuthHeader: [] }]);
    await expectStatus(401, { method: "POST", url: "/v1/ingest/helius", payload: helius() });
  });

  it("names its shared schemas, Problem and the resources, so a generated client's types are called that and not def-0", () => {
    // Which operation references which resource: openapi-named-schemas.test.ts.
    const schemas = Object.keys(document.components?.schemas ?? {});
    expect(schemas).toEqual(NAMED_SCHEMAS.map((schema) => schema.$id));
    expect(schemas).toContain("Problem");
    const refs = JSON.stringify(document.paths).match(/"\$ref":"[^"]+"/g) ?? [];
    // The headers every operation shares are components too (components.headers), each referenced by its own name.
    const headers = Object.keys(document.components?.headers ?? {}).map((name) => `"$ref":"#/components/headers/${name}"`);
    expect(new Set(refs)).toEqual(new Set([...schemas.map((name) => `"$ref":"#/components/schemas/${name}"`), ...headers]));
  });

  it("says what each response is (no generated \"Default Response\") and types every enum of strings as a string", () => {
    const undescribed = Object.entries(document.paths ?? {}).flatMap(([path, operations]) =>
      Object.entries(operations as Record<string, { responses?: Record<string, { description?: string }> }>).flatMap(([method, operation]) =>
        Object.entries(operation.responses ?? {})
          .filter(([, response]) => !response.description || response.description === "Default Response")
          .map(([status]) => `${method.toUpperCase()} ${path} → ${status}`),
      ),
    );
    expect(undescribed).toEqual([]);
    const untyped: string[] = [];
    const visit = (value: unknown, at: string): void => {
      if (typeof value !== "object" || value === null) return;
      const node = value as Record<string, unknown>;
      if (Array.isArray(node.enum) && node.type === undefined) untyped.push(at);
      for (const [key, child] of Object.entries(node)) visit(child, `${at}/${key}`);
    };
    visit(document, "#");
    expect(untyped).toEqual([]);
  });

  it("documents each number in a query as the integer the server takes, with the bounds and the default it enforces", async () => {
    const digitsOnly = (pattern: string) => new RegExp(pattern).test("1") && !new RegExp(pattern).test("x");
    const asStrings = contract.operations.flatMap((key) =>
      contract
        .parametersOf(key)
        .filter((param) => param.in === "query" && param.schema?.type === "string" && digitsOnly(String(param.schema.pattern ?? "")))
        .map((param) => `${key} ${param.name}`),
    );
    expect(asStrings).toEqual([]);
    const integers = contract.operations.flatMap((key) =>
      contract.parametersOf(key).flatMap((param) => (param.in === "query" && param.schema?.type === "integer" ? [{ key, param }] : [])),
    );
    expect(integers.length).toBeGreaterThan(0);

    // Real data, so that each value is answered 200 and a default can be compared with the answer without it.
    const dora = await t.token("dora");
    const wallet = await expectStatus<Wallet>(201, { method: "POST", url: "/v1/wallets", token: dora, payload: { address: randomAddress() } });
    const moves = [1, 2, 3].map((i) => makeTransaction({ from: wallet.address, to: randomAddress(), amount: i, blockTime: now - i }));
    await expectStatus(202, { method: "POST", url: "/v1/ingest/transactions", token: dora, payload: { transactions: moves } });
    const alert = await expectStatus<Alert>(201, {
      method: "POST",
      url: "/v1/risk/alerts",
      token: dora,
      payload: { walletId: wallet.walletId, condition: "unusual_activity", notificationMethod: "sms", recipient: "+14155550123" },
    });
    for (const { key, param } of integers) {
      const sample = { ...sampleRequest(key, { walletId: wallet.walletId, alertId: alert.alertId }), token: dora };
      const given = (value: unknown) => ({ ...sample, url: `${sample.url}${sample.url.includes("?") ? "&" : "?"}${param.name}=${String(value)}` });
      const { minimum, maximum } = param.schema as { minimum?: number; maximum?: number };
      expect([typeof minimum, typeof maximum], `${key} ${param.name}: bounds`).toEqual(["number", "number"]);
      await expectStatus(200, given(minimum));
      await expectStatus(200, given(maximum));
      for (const outside of [minimum! - 1, maximum! + 1]) {
        const refused = await expectStatus<{ errors: Array<{ path: string }> }>(400, given(outside));
        expect(refused.errors.map((error) => error.path), `${key} ${param.name}=${outside}`).toEqual([`query.${param.name}`]);
      }
      if (param.schema?.default !== undefined) {
        expect(await expectStatus(200, given(param.schema.default)), `${key} ${param.name}: default`).toEqual(await expectStatus(200, sample));
      }
    }
  });

  it("tracks, feeds, scores, reads, lists, changes and deletes wallets and their transactions", async () => {
    const sanctioned = randomAddress();
    const wallet = await expectStatus<Wallet>(201, { method: "POST", url: "/v1/wallets", token: alice, payload: { address: randomAddress(), alias: "Treasury", tags: ["cold", "ops"] } });
    const spare = await expectStatus<Wallet>(201, { method: "POST", url: "/v1/wallets", token: alice, payload: { address: randomAddress() } });
    await expectStatus(201, { method: "POST", url: "/v1/wallets", token: alice, payload: { address: HELIUS_WALLET, alias: null, tags: [] } });
    await expectStatus(409, { method: "POST", url: "/v1/wallets", token: alice, payload: { address: wallet.address } });
    await expectStatus(400, { method: "POST", url: "/v1/wallets", token: alice, payload: { address: "not-an-address" } });
    await expectStatus(400, { method: "POST", url: "/v1/wallets", token: alice, payload: { address: randomAddress(), colour: "red" } });
    await expectStatus(400, { method: "POST", url: "/v1/wallets", token: alice, payload: "{" });
    await expectStatus(400, { method: "POST", url: "/v1/wallets", token: alice, payload: "" });
    await expectStatus(415, { method: "POST", url: "/v1/wallets", token: alice, headers: { "content-type": "application/json; charset=latin1" }, payload: "{}" });
    await expectStatus(415, { method: "POST", url: "/v1/wallets", token: alice, headers: { "content-encoding": "gzip" }, payload: "{}" });

    await expectStatus(200, { method: "PUT", url: "/v1/risk/labels", token: alice, payload: { labels: [{ address: sanctioned, category: "sanctioned", score: 100, source: "ofac-sdn" }] } });
    await expectStatus(400, { method: "PUT", url: "/v1/risk/labels", token: alice, payload: { labels: [{ address: sanctioned, category: "villain", score: 100 }] } });
    await expectStatus(200, { method: "GET", url: `/v1/risk/labels/${sanctioned}`, token: alice });
    await expectStatus(404, { method: "GET", url: `/v1/risk/labels/${randomAddress()}`, token: alice });
    await expectStatus(400, { method: "GET", url: "/v1/risk/labels/not-an-address", token: alice });
    const mistaken = randomAddress();
    await expectStatus(200, { method: "PUT", url: "/v1/risk/labels", token: alice, payload: { labels: [{ address: mistaken, category: "scam", score: 80 }] } });
    await expectStatus(200, { method: "DELETE", url: "/v1/risk/labels", token: alice, payload: { addresses: [mistaken, randomAddress()] } });
    await expectStatus(400, { method: "DELETE", url: "/v1/risk/labels", token: alice, payload: { addresses: [mistaken, mistaken] } });
    await expectStatus(200, { method: "GET", url: `/v1/risk/labels/${mistaken}/history?limit=1`, token: alice });
    await expectStatus(400, { method: "GET", url: `/v1/risk/labels/${mistaken}/history?after=lld_unknown`, token: alice });
    await expectStatus(202, {
      method: "POST",
      url: "/v1/ingest/accounts",
      token: alice,
      payload: {
        accounts: [
          {
            address: wallet.address,
            balance: 12.5,
            tokenAccounts: [
              { mint: MINTS.USDC, symbol: "USDC", balance: 2500.25, usdValue: 2500.25 },
              { mint: MINTS.BONK, symbol: "", balance: 1e9, usdValue: 21.5 },
            ],
            nfts: [{ mint: randomAddress(), name: "Mad Lad #1", collection: "Mad Lads", floorPrice: 9000 }],
          },
        ],
      },
    });
    await expectStatus(400, { method: "POST", url: "/v1/ingest/accounts", token: alice, payload: { accounts: [{ address: wallet.address, balance: -1, tokenAccounts: [], nfts: [] }] } });
    const me = wallet.address;
    const history = [
      makeTransaction({ from: me, to: sanctioned, amount: 40, blockTime: now - 50 }),
      makeTransaction({ from: randomAddress(), to: me, amount: 1200, token: "USDC", mint: MINTS.USDC, blockTime: now - 40 }),
      makeTransaction({ from: me, to: randomAddress(), type: "swap", amount: 3, blockTime: now - 30 }),
      makeTransaction({ from: me, to: randomAddress(), type: "stake", amount: 10, blockTime: now - 20 }),
      makeTransaction({ from: me, to: randomAddress(), type: "nft", amount: 1, token: "Mad Lad #1", blockTime: now - 10, status: "failed" }),
      makeTransaction({ from: me, to: me, type: "other", amount: 0, blockTime: now }),
    ];
    await expectStatus(202, { method: "POST", url: "/v1/ingest/transactions", token: alice, payload: { transactions: history } });
    expect(await expectStatus(202, { method: "POST", url: "/v1/ingest/transactions", token: alice, payload: { transactions: history.slice(0, 2) } })).toEqual({ accepted: 0, duplicates: 2 });
    await expectStatus(400, { method: "POST", url: "/v1/ingest/transactions", token: alice, payload: { transactions: [{ ...history[0], amount: "40" }] } });
    await expectStatus(202, { method: "POST", url: "/v1/ingest/helius", headers: { authorization: HELIUS_SECRET }, payload: helius() });
    // An item the webhook cannot read: the delivery is still a 202, the item listed in `rejected`.
    const refused = { ...(helius()[0] as object), fee: "5000" };
    const withRefused = await expectStatus<{ rejected: unknown[] }>(202, { method: "POST", url: "/v1/ingest/helius", headers: { authorization: HELIUS_SECRET }, payload: [refused] });
    expect(withRefused.rejected).toEqual([{ index: 0, signature: expect.any(String), errors: [{ path: "body.0.fee", message: "must be a whole number" }] }]);
    await expectStatus(400, { method: "POST", url: "/v1/ingest/helius", headers: { authorization: HELIUS_SECRET }, payload: [] });
    await settled(t);

    const detail = await expectStatus<Wallet>(200, { method: "GET", url: `/v1/wallets/${wallet.walletId}`, token: alice });
    expect(detail.tokenAccounts.length).toBe(2);
    expect(detail.nfts.length).toBe(1);
    expect(detail.riskFactors).toContain("sanctioned_counterparty");
    expect(detail.riskScore).toBeGreaterThan(0);
    await expectStatus(404, { method: "GET", url: `/v1/wallets/${wallet.walletId}`, token: bob });
    await expectStatus(404, { method: "GET", url: "/v1/wallets/wal_unknown", token: alice });
    await expectStatus(400, { method: "GET", url: `/v1/wallets/${"w".repeat(65)}`, token: alice });
    // Refused by the router itself, before any route runs.
    await expectStatus(400, { method: "GET", url: `/v1/wallets/${"w".repeat(201)}`, token: alice });
    await expectStatus(400, { method: "GET", url: "/v1/wallets/%E0%A4%A", token: alice });
    await expectStatus(401, { method: "GET", url: "/v1/wallets/%E0%A4%A" });

    for (const sortBy of ["balance", "riskScore", "lastActivity", "trackedAt"]) {
      for (const order of ["asc", "desc"]) {
        const page = await expectStatus<{ wallets: unknown[] }>(200, { method: "GET", url: `/v1/wallets?sortBy=${sortBy}&order=${order}&limit=2`, token: alice });
        expect(page.wallets.length).toBe(2);
      }
    }
    expect(await expectStatus(200, { method: "GET", url: "/v1/wallets?page=99", token: alice })).toMatchObject({ wallets: [], total: 3 });
    await expectStatus(200, { method: "GET", url: "/v1/wallets", token: bob });
    await expectStatus(400, { method: "GET", url: "/v1/wallets?limit=0", token: alice });
    await expectStatus(400, { method: "GET", url: "/v1/wallets?sortBy=colour", token: alice });

    const transactions = (query: string, token = alice) => ({ method: "GET" as const, url: `/v1/transactions?${query}`, token });
    const all = await expectStatus<{ transactions: unknown[]; hasMore: boolean }>(200, transactions(`walletId=${wallet.walletId}`));
    expect(all.transactions.length).toBe(history.length);
    expect((await expectStatus<{ hasMore: boolean }>(200, transactions(`walletId=${wallet.walletId}&limit=2&offset=1`))).hasMore).toBe(true);
    for (const type of ["all", "transfer", "swap", "stake", "nft", "other"]) {
      await expectStatus(200, transactions(`walletId=${wallet.walletId}&type=${type}&startTime=${now - 45}&endTime=${now}`));
    }
    const heliusWallet = (await expectStatus<{ wallets: Wallet[] }>(200, { method: "GET", url: "/v1/wallets?limit=100", token: alice })).wallets.find((w) => w.address === HELIUS_WALLET)!;
    expect((await expectStatus<{ transactions: unknown[] }>(200, transactions(`walletId=${heliusWallet.walletId}&limit=500`))).transactions.length).toBeGreaterThan(0);
    await expectStatus(200, transactions(`walletId=${spare.walletId}`));
    await expectStatus(400, transactions(`walletId=${wallet.walletId}&startTime=${now}&endTime=${now - 1}`));
    await expectStatus(400, transactions(`walletId=${wallet.walletId}&limit=501`));
    await expectStatus(400, transactions("limit=5"));
    await expectStatus(404, transactions(`walletId=${wallet.walletId}`, bob));
    await expectStatus(404, transactions("walletId=wal_unknown"));

    // Optimistic concurrency: the ETag of a read in If-Match; a stale one is a 412 (precondition_failed).
    const read = (await call({ method: "GET", url: `/v1/wallets/${wallet.walletId}`, token: alice })).headers.etag as string;
    await expectStatus(200, { method: "PATCH", url: `/v1/wallets/${wallet.walletId}`, token: alice, headers: { "if-match": read }, payload: { alias: null, tags: ["hot"] } });
    const stale = await expectStatus(412, { method: "PATCH", url: `/v1/wallets/${wallet.walletId}`, token: alice, headers: { "if-match": read }, payload: { tags: ["cold"] } });
    expect(stale).toMatchObject({ code: "precondition_failed" });
    await expectStatus(412, { method: "DELETE", url: `/v1/wallets/${wallet.walletId}`, token: alice, headers: { "if-match": read } });
    await expectStatus(400, { method: "PATCH", url: `/v1/wallets/${wallet.walletId}`, token: alice, headers: { "if-match": "unquoted" }, payload: { alias: "Renamed" } });
    await expectStatus(200, { method: "PATCH", url: `/v1/wallets/${wallet.walletId}`, token: alice, payload: { alias: "Renamed" } });
    await expectStatus(400, { method: "PATCH", url: `/v1/wallets/${wallet.walletId}`, token: alice, payload: {} });
    await expectStatus(404, { method: "PATCH", url: `/v1/wallets/${wallet.walletId}`, token: bob, payload: { alias: "Mine now" } });
    await expectStatus(204, { method: "DELETE", url: `/v1/wallets/${spare.walletId}`, token: alice });
    await expectStatus(404, { method: "DELETE", url: `/v1/wallets/${spare.walletId}`, token: alice });
  });

  it("creates alerts of every condition and method, changes, tests, rotates, fires and deletes them", async () => {
    const wallet = await expectStatus<Wallet>(201, { method: "POST", url: "/v1/wallets", token: alice, payload: { address: randomAddress(), alias: "Hot wallet" } });
    const alerts = new Map<string, Alert>();
    for (const condition of ["large_transfer", "suspicious_counterparty", "unusual_activity", "risk_score_increase"]) {
      for (const method of ["webhook", "email", "sms"]) {
        const destination =
          method === "webhook" ? { webhookUrl: receiver.route(`/${condition}`).url } : { recipient: method === "email" ? "ops@example.com" : "+14155550123" };
        const threshold = condition === "large_transfer" ? { threshold: 1000 } : condition === "risk_score_increase" ? { threshold: 10 } : {};
        const body = { walletId: wallet.walletId, condition, notificationMethod: method, ...threshold, ...destination };
        alerts.set(`${condition} ${method}`, await expectStatus<Alert>(201, { method: "POST", url: "/v1/risk/alerts", token: alice, payload: body }));
      }
    }
    const withToken = await expectStatus<Alert>(201, {
      method: "POST",
      url: "/v1/risk/alerts",
      token: alice,
      payload: { walletId: wallet.walletId, condition: "large_transfer", threshold: 5, token: "USDC", cooldownSeconds: 60, notificationMethod: "email", recipient: "ops@example.com" },
    });
    const create = (payload: Record<string, unknown>, token = alice) => ({ method: "POST" as const, url: "/v1/risk/alerts", token, payload });
    await expectStatus(400, create({ walletId: wallet.walletId, condition: "large_transfer", threshold: "1000", notificationMethod: "email", recipient: "ops@example.com" }));
    await expectStatus(400, create({ walletId: wallet.walletId, condition: "large_transfer", notificationMethod: "email", recipient: "ops@example.com" }));
    await expectStatus(400, create({ walletId: wallet.walletId, condition: "unusual_activity", notificationMethod: "webhook" }));
    await expectStatus(400, create({ walletId: wallet.walletId, condition: "unusual_activity", notificationMethod: "email" }));
    await expectStatus(400, create({ walletId: wallet.walletId, condition: "bad_vibes", notificationMethod: "sms", recipient: "+14155550123" }));
    await expectStatus(404, create({ walletId: "wal_unknown", condition: "unusual_activity", notificationMethod: "sms", recipient: "+14155550123" }));
    await expectStatus(404, create({ walletId: wallet.walletId, condition: "unusual_activity", notificationMethod: "sms", recipient: "+14155550123" }, bob));
    // An Idempotency-Key replays the first answer (201), and refuses another request under it (409).
    // Its alert fills the wallet (MAX_ALERTS_PER_WALLET): the replay is answered at the cap.
    const keyed = (threshold: number) => ({
      ...create({ walletId: wallet.walletId, condition: "large_transfer", threshold, notificationMethod: "email", recipient: "ops@example.com" }),
      headers: { "idempotency-key": "contract-create-1" },
    });
    const keyedFirst = await expectStatus<Alert>(201, keyed(7));
    expect((await expectStatus<Alert>(201, keyed(7))).alertId).toBe(keyedFirst.alertId);
    expect(await expectStatus(409, keyed(8))).toMatchObject({ code: "conflict" });
    // One more is over the cap: a 409 conflict too (DESIGN.md's closed list), without the Location of a key's alert.
    const capped = await call(create({ walletId: wallet.walletId, condition: "unusual_activity", notificationMethod: "sms", recipient: "+14155550123" }));
    expect(capped.statusCode, capped.body).toBe(409);
    expect(capped.json()).toMatchObject({ code: "conflict", detail: expect.stringContaining("MAX_ALERTS_PER_WALLET") });
    expect(capped.headers.location).toBeUndefined();

    const webhookAlert = alerts.get("large_transfer webhook")!;
    const emailAlert = alerts.get("large_transfer email")!;
    const one = (alert: Alert, suffix = "") => `/v1/risk/alerts/${alert.alertId}${suffix}`;
    const list = await expectStatus<{ alerts: unknown[]; total: number }>(200, { method: "GET", url: "/v1/risk/alerts", token: alice });
    expect(list.total).toBe(ALERTS_PER_WALLET); // 12 of every condition and method, one with a token filter, one keyed
    await expectStatus(200, { method: "GET", url: `/v1/risk/alerts?walletId=${wallet.walletId}&status=active&page=2&limit=5`, token: alice });
    const firstPage = await expectStatus<{ alerts: Alert[]; hasMore: boolean }>(200, { method: "GET", url: "/v1/risk/alerts?limit=5", token: alice });
    expect(firstPage.hasMore).toBe(true);
    await expectStatus(200, { method: "GET", url: `/v1/risk/alerts?limit=5&after=${firstPage.alerts.at(-1)!.alertId}`, token: alice });
    await expectStatus(400, { method: "GET", url: `/v1/risk/alerts?page=2&after=${firstPage.alerts.at(-1)!.alertId}`, token: alice });
    await expectStatus(400, { method: "GET", url: "/v1/risk/alerts?status=sleeping", token: alice });
    await expectStatus(404, { method: "GET", url: `/v1/risk/alerts?walletId=${wallet.walletId}`, token: bob });
    await expectStatus(200, { method: "GET", url: one(webhookAlert), token: alice });
    await expectStatus(404, { method: "GET", url: one(webhookAlert), token: bob });
    await expectStatus(404, { method: "GET", url: "/v1/risk/alerts/alr_unknown", token: alice });

    const patch = (alert: Alert, payload: unknown, token = alice) => ({ method: "PATCH" as const, url: one(alert), token, payload });
    const alertRead = (await call({ method: "GET", url: one(withToken), token: alice })).headers.etag as string;
    await expectStatus(200, { ...patch(withToken, { status: "paused" }), headers: { "if-match": alertRead } });
    await expectStatus(412, { ...patch(withToken, { threshold: 6 }), headers: { "if-match": alertRead } });
    await expectStatus(412, { method: "DELETE", url: one(withToken), token: alice, headers: { "if-match": alertRead } });
    await expectStatus(200, patch(withToken, { status: "active", threshold: 10, cooldownSeconds: 0, recipient: "risk@example.com" }));
    await expectStatus(200, patch(alerts.get("unusual_activity webhook")!, { webhookUrl: receiver.route("/moved").url }));
    await expectStatus(400, patch(withToken, {}));
    await expectStatus(400, patch(webhookAlert, { recipient: "ops@example.com" }));
    await expectStatus(404, patch(withToken, { status: "paused" }, bob));

    // Tests through each channel; the webhook one is delivered to the receiver.
    const tested = await expectStatus<{ notificationId: string }>(202, { method: "POST", url: one(alerts.get("unusual_activity webhook")!, "/test"), token: alice });
    await expectStatus(202, { method: "POST", url: one(emailAlert, "/test"), token: alice });
    await expectStatus(202, { method: "POST", url: one(alerts.get("large_transfer sms")!, "/test"), token: alice });
    await expectStatus(400, { method: "POST", url: one(emailAlert, "/test"), token: alice, payload: { loud: true } });
    await expectStatus(404, { method: "POST", url: one(emailAlert, "/test"), token: bob });
    // The API cannot take an email alert's recipient away; an operator's cleanup can.
    await t.deps.sql`update alerts set recipient = null where id = ${withToken.alertId}`;
    await expectStatus(409, { method: "POST", url: one(withToken, "/test"), token: alice });
    await waitFor("the test webhook to be delivered", async () => {
      const res = await expectStatus<{ status: string }>(200, { method: "GET", url: `/v1/notifications/${tested.notificationId}`, token: alice });
      return res.status === "delivered";
    });
    await expectStatus(404, { method: "GET", url: `/v1/notifications/${tested.notificationId}`, token: bob });
    await expectStatus(404, { method: "GET", url: "/v1/notifications/ntf_unknown", token: alice });
    // The alert's notifications, the test among them with its type; a cursor, the filters; a
    // cursor that is no notification of the alert is a 400, another caller's alert a 404.
    const tests = one(alerts.get("unusual_activity webhook")!, "/notifications");
    type Listed = { notifications: Array<{ notificationId: string; type: string }>; hasMore: boolean };
    const listed = await expectStatus<Listed>(200, { method: "GET", url: tests, token: alice });
    expect(listed.notifications.map((n) => [n.notificationId, n.type])).toContainEqual([tested.notificationId, "risk_alert.test"]);
    await expectStatus(200, { method: "GET", url: `${tests}?after=${tested.notificationId}&status=delivered&type=risk_alert.test&limit=10`, token: alice });
    await expectStatus(400, { method: "GET", url: `${tests}?after=ntf_unknown`, token: alice });
    await expectStatus(404, { method: "GET", url: tests, token: bob });
    // Redelivery: a test its receiver refuses for good (400) fails, and is sent again; one that
    // has not failed is a 409, and so is any of a disabled alert's.
    const refusing = alerts.get("suspicious_counterparty webhook")!;
    receiver.route("/suspicious_counterparty").respond({ status: 400, body: "misconfigured" });
    const refused = await expectStatus<{ notificationId: string }>(202, { method: "POST", url: one(refusing, "/test"), token: alice });
    const redeliver = (id: string, token = alice) => ({ method: "POST" as const, url: `/v1/notifications/${id}/redeliver`, token });
    await waitFor("the refused test to fail", async () => (await expectStatus<{ status: string }>(200, { method: "GET", url: `/v1/notifications/${refused.notificationId}`, token: alice })).status === "failed");
    await expectStatus(404, redeliver(refused.notificationId, bob));
    await expectStatus(202, redeliver(refused.notificationId));
    await expectStatus(409, redeliver(refused.notificationId));
    const inWindow = (alert: Alert, payload: unknown = { since: new Date(Date.now() - 3_600_000).toISOString() }, token = alice) => ({
      method: "POST" as const,
      url: one(alert, "/notifications/redeliver"),
      token,
      payload,
    });
    await expectStatus(202, inWindow(refusing));
    await expectStatus(400, inWindow(refusing, { since: "an hour ago" }));
    await expectStatus(404, inWindow(refusing, undefined, bob));
    await t.deps.sql`update alerts set status = 'disabled', disabled_reason = 'the webhook endpoint answered 410 Gone' where id = ${refusing.alertId}`;
    await expectStatus(409, inWindow(refusing));
    await expectStatus(200, { method: "PATCH", url: one(refusing), token: alice, payload: { status: "active" } });
    // The hourly test quota: a 429 once it is spent (or one hour later, if the hour turns meanwhile).
    let quota = 0;
    for (let i = 0; i < 2 * TESTS_PER_HOUR + 2 && quota !== 429; i += 1) {
      quota = (await call({ method: "POST", url: one(emailAlert, "/test"), token: alice })).statusCode;
    }
    expect(quota).toBe(429);

    const rotated = await expectStatus<{ webhookSecret: string }>(200, { method: "POST", url: one(webhookAlert, "/rotate-secret"), token: alice });
    expect(rotated.webhookSecret).toMatch(/^whsec_/);
    await expectStatus(409, { method: "POST", url: one(emailAlert, "/rotate-secret"), token: alice });
    await expectStatus(404, { method: "POST", url: one(webhookAlert, "/rotate-secret"), token: bob });

    // Fire: a large transfer to a counterparty labelled afterwards (a rescore, so a score-change event too).
    const mixer = randomAddress();
    receiver.route("/large_transfer").respond({ status: 500, body: "down for a moment" });
    await expectStatus(202, { method: "POST", url: "/v1/ingest/transactions", token: alice, payload: { transactions: [makeTransaction({ from: wallet.address, to: mixer, amount: 2500, blockTime: now })] } });
    await settled(t);
    await expectStatus(200, { method: "PUT", url: "/v1/risk/labels", token: alice, payload: { labels: [{ address: mixer, category: "mixer", score: 95 }] } });
    await expectStatus(202, { method: "POST", url: "/v1/ingest/transactions", token: alice, payload: { transactions: [makeTransaction({ from: mixer, to: wallet.address, amount: 1, blockTime: now + 1 })] } });
    await settled(t);
    type Events = { events: Array<{ notificationId?: string; transactionSignature?: string }>; total: number; hasMore: boolean };
    const fired = await expectStatus<Events>(200, { method: "GET", url: one(webhookAlert, "/events"), token: alice });
    expect(fired.events.length).toBe(1);
    const scoreEvents = await expectStatus<Events>(200, { method: "GET", url: one(alerts.get("risk_score_increase webhook")!, "/events?limit=1&offset=0"), token: alice });
    // A score change, not a transaction, fired it: the optional transactionSignature is left out.
    expect(scoreEvents.events.length).toBe(1);
    expect(scoreEvents.events[0]!.transactionSignature).toBeUndefined();
    expect(scoreEvents.events[0]!.notificationId).toEqual(expect.any(String));
    await expectStatus(200, { method: "GET", url: one(alerts.get("suspicious_counterparty sms")!, "/events"), token: alice });
    await expectStatus(400, { method: "GET", url: one(webhookAlert, "/events?limit=0"), token: alice });
    await expectStatus(404, { method: "GET", url: one(webhookAlert, "/events"), token: bob });
    const notificationId = fired.events[0]!.notificationId!;
    await waitFor("the alert's webhook to be delivered after a failed attempt", async () => {
      const res = await expectStatus<{ status: string }>(200, { method: "GET", url: `/v1/notifications/${notificationId}`, token: alice });
      return res.status === "delivered";
    });

    // Events of a period; each with what it was judged by (or null, an event from before the service kept it).
    await expectStatus(200, { method: "GET", url: one(webhookAlert, `/events?since=${encodeURIComponent(new Date(0).toISOString())}&until=2999-01-01T00:00:00Z`), token: alice });
    await expectStatus(400, { method: "GET", url: one(webhookAlert, "/events?since=yesterday"), token: alice });

    await expectStatus(204, { method: "DELETE", url: one(withToken), token: alice });
    await expectStatus(404, { method: "DELETE", url: one(withToken), token: alice });
    // The wallet's export: its alerts' events, a deleted alert's too, oldest first, with a cursor; another caller's wallet is a 404.
    const walletEvents = (query: string, token = alice) => ({ method: "GET" as const, url: `/v1/wallets/${wallet.walletId}/events${query}`, token });
    type WalletEvents = { events: Array<{ eventId: string; transactionSignature?: string; blockTime: number | null }>; hasMore: boolean };
    const exported = await expectStatus<WalletEvents>(200, walletEvents("?since=2000-01-01T00:00:00Z&limit=1"));
    expect(exported.hasMore).toBe(true);
    await expectStatus(200, walletEvents(`?after=${exported.events[0]!.eventId}&until=2999-01-01T00:00:00Z`));
    await expectStatus(400, walletEvents("?after=evt_unknown"));
    await expectStatus(404, walletEvents("", bob));
    // The transaction behind an event, by its signature.
    const behind = (await expectStatus<WalletEvents>(200, walletEvents("?limit=500"))).events.find((event) => event.transactionSignature !== undefined)!;
    const byTransaction = await expectStatus<{ transactions: Array<{ blockTime: number }> }>(200, {
      method: "GET",
      url: `/v1/transactions?walletId=${wallet.walletId}&signature=${behind.transactionSignature!}`,
      token: alice,
    });
    expect(byTransaction.transactions.map((transaction) => transaction.blockTime)).toEqual([behind.blockTime]);
    await expectStatus(400, { method: "GET", url: `/v1/transactions?walletId=${wallet.walletId}&signature=0OIl`, token: alice });
    // The history of an alert, a deleted one's too (its deletion last); a cursor; another caller's is a 404.
    type History = { history: Array<{ changeId: number; action: string }>; hasMore: boolean };
    const changed = await expectStatus<History>(200, { method: "GET", url: one(withToken, "/history?limit=1"), token: alice });
    expect(changed.hasMore).toBe(true);
    const rest = await expectStatus<History>(200, { method: "GET", url: one(withToken, `/history?after=${changed.history[0]!.changeId}`), token: alice });
    expect(rest.history.at(-1)!.action).toBe("deleted");
    await expectStatus(400, { method: "GET", url: one(withToken, "/history?after=x"), token: alice });
    await expectStatus(404, { method: "GET", url: one(withToken, "/history"), token: bob });
  });

  it("refuses, as documented, a request without a valid token, without the scope, with an unknown parameter, the wrong media type or too large a body", async () => {
    const unscoped = await t.token("carol", "");
    const tooLarge = `{"padding":"${"x".repeat(10 * 1024 * 1024)}"}`;
    for (const key of contract.operations) {
      const sample = sampleRequest(key);
      const open = contract.isPublic(key);
      // Helius cannot send a JWT: its secret is the whole Authorization header.
      const credentials = open ? { headers: { authorization: HELIUS_SECRET } } : { token: alice };
      await expectStatus(401, { ...sample, ...(open ? { headers: { authorization: "Bearer guess" } } : {}) });
      if (!open) {
        await expectStatus(401, { ...sample, token: "not.a.jwt" });
        await expectStatus(403, { ...sample, token: unscoped });
        await expectStatus(400, { ...sample, ...credentials, url: `${sample.url}${sample.url.includes("?") ? "&" : "?"}unknownParameter=1` });
      }
      if (sample.method === "GET") continue;
      await expectStatus(415, { ...sample, ...credentials, headers: { ...credentials.headers, "content-type": "text/plain" }, payload: "hello" });
      await expectStatus(413, { ...sample, ...credentials, headers: { ...credentials.headers, "content-type": "application/json" }, payload: tooLarge });
    }
  });

  it("answers 503 on every operation while PostgreSQL cannot be reached, and 429 over the rate limit", async () => {
    // One request a minute per caller: each operation's first call reaches the database, its next is over the limit.
    const down = await startAppWithoutDatabase("openapi-contract-down", { RATE_LIMIT_PER_MINUTE: "1", HELIUS_AUTH_HEADER: HELIUS_SECRET });
    const noHelius = await startAppWithoutDatabase("openapi-contract-no-helius");
    try {
      for (const [i, key] of contract.operations.entries()) {
        const sample = sampleRequest(key);
        if (contract.isPublic(key)) {
          const request = { ...sample, headers: { authorization: HELIUS_SECRET } };
          expect((await client.call(down.app, request)).statusCode, key).toBe(503);
          expect((await client.call(noHelius.app, request)).statusCode, key).toBe(404);
          continue;
        }
        const token = await mintToken(TEST_JWT_SECRET, { sub: `caller-${i}`, scope: "admin", ttlSeconds: 600 }, down.config.jwt);
        expect((await client.call(down.app, { ...sample, token })).statusCode, key).toBe(503);
        // A new minute may start in between and admit one more: then the next is refused.
        let status = 0;
        for (let attempt = 0; attempt < 3 && status !== 429; attempt += 1) status = (await client.call(down.app, { ...sample, token })).statusCode;
        expect(status, key).toBe(429);
      }
    } finally {
      await down.close();
      await noHelius.close();
    }
  });

  it("answers 500 problem+json on every operation when something unplanned fails (a database nobody migrated)", async () => {
    const broken = await startAppOnEmptyDatabase("openapi-contract-broken", { HELIUS_AUTH_HEADER: HELIUS_SECRET });
    try {
      const token = await mintToken(TEST_JWT_SECRET, { sub: "alice", scope: "admin", ttlSeconds: 600 }, broken.config.jwt);
      for (const key of contract.operations) {
        const sample = sampleRequest(key);
        const credentials = contract.isPublic(key) ? { headers: { authorization: HELIUS_SECRET } } : { token };
        const res = await client.call(broken.app, { ...sample, ...credentials });
        expect(res.statusCode, `${key}: ${res.body}`).toBe(500);
        expect(res.json()).toMatchObject({ code: "internal" });
      }
    } finally {
      await broken.close();
    }
  });

  it("has seen every operation answer with every status its documentation lists", () => {
    const missing = contract.operations.flatMap((key) =>
      contract.statusesOf(key).filter((status) => !contract.seen.get(key)?.has(Number(status))).map((status) => `${key} → ${status}`),
    );
    expect(missing).toEqual([]);
  });
});
