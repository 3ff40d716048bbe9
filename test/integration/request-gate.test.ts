// What every /v1 request passes before a handler: authentication decided by the route the
// router matched (not by how the URL was spelled), a 401 before any other complaint, and
// no query parameter that the route does not know. Over a real socket as well as inject,
// because percent-decoding and over-long request lines happen in the HTTP layer.
import { request as httpRequest } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { insertWallet, problem } from "../helpers/alert-fixtures.ts";
import { randomAddress } from "../helpers/chain.ts";
import { makeTransaction } from "../helpers/seed.ts";

let t: TestApp;
let port: number;
let token: string;
let walletId: string;

beforeAll(async () => {
  t = await startTestApp("request-gate");
  await t.app.listen({ host: "127.0.0.1", port: 0 });
  port = (t.app.server.address() as AddressInfo).port;
  token = await t.token("gate-caller");
  walletId = (await insertWallet(t, "gate-caller")).walletId;
});
afterAll(async () => {
  await t.close();
});

type RawResponse = { status: number; headers: Record<string, string | string[] | undefined>; body: string };

/** One request over a real socket, the path sent exactly as given (no normalising client). */
function raw(method: string, path: string, options: { body?: unknown; authorization?: string } = {}): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
    const req = httpRequest(
      {
        host: "127.0.0.1",
        port,
        method,
        path,
        headers: {
          ...(payload ? { "content-type": "application/json", "content-length": Buffer.byteLength(payload) } : {}),
          ...(options.authorization ? { authorization: options.authorization } : {}),
        },
      },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => (body += chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on("error", reject);
    req.end(payload);
  });
}

function expectProblem(res: RawResponse, status: number, code: string): { detail: string; requestId: string; errors?: unknown[] } {
  expect({ status: res.status, type: res.headers["content-type"] }).toEqual({ status, type: "application/problem+json; charset=utf-8" });
  const body = JSON.parse(res.body) as { status: number; code: string; detail: string; requestId: string; errors?: unknown[] };
  expect(body).toMatchObject({ status, code });
  expect(body.requestId).toBeTruthy();
  return body;
}

describe("authentication follows the matched route, however the path is spelled", () => {
  const label = { labels: [{ address: randomAddress(), category: "sanctioned", score: 99 }] };

  it.each([
    ["PUT", "/%761/risk/labels", label],
    ["PUT", "/%76%31/risk/labels", label],
    ["PUT", "/v1/risk/%6cabels", label],
    ["POST", "/%761/ingest/transactions", { transactions: [] }],
    ["POST", "/%761/ingest/accounts", { accounts: [] }],
    ["GET", "/%761/wallets", undefined],
    ["GET", "/%761/risk/alerts", undefined],
  ])("answers %s %s without a token with 401", async (method, path, body) => {
    const res = await raw(method, path, { body });
    expectProblem(res, 401, "unauthorized");
    expect(res.headers["www-authenticate"]).toContain('error="invalid_token"');
  });

  it("stored no label from the refused requests", async () => {
    const [row] = await t.deps.sql<{ n: number }[]>`select count(*)::int as n from risk_labels where address = ${label.labels[0]!.address}`;
    expect(row!.n).toBe(0);
  });

  it("still serves an encoded path to a caller with a valid token", async () => {
    const res = await raw("GET", "/%761/wallets", { authorization: `Bearer ${token}` });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toMatchObject({ wallets: [expect.objectContaining({ walletId })] });
  });

  it("answers an unknown /v1 route without a token with 401, and with one with 404", async () => {
    expectProblem(await raw("GET", "/%761/no-such-thing"), 401, "unauthorized");
    expectProblem(await raw("GET", "/v1/no-such-thing", { authorization: `Bearer ${token}` }), 404, "not_found");
  });

  it("leaves the public routes public", async () => {
    expect((await raw("GET", "/v1/openapi.json")).status).toBe(200);
    expect((await raw("GET", "/healthz")).status).toBe(200);
  });
});

describe("a 401 comes before the router's own complaints about the URL", () => {
  it.each([
    ["bad percent-encoding", "/v1/wallets/%zz"],
    ["an over-long path parameter", `/v1/wallets/${"w".repeat(300)}`],
  ])("answers %s without a token with 401", async (_what, path) => {
    const res = await raw("GET", path);
    expectProblem(res, 401, "unauthorized");
  });

  it("answers the same URLs with a valid token with 400 and what the router found wrong", async () => {
    const bad = expectProblem(await raw("GET", "/v1/wallets/%zz", { authorization: `Bearer ${token}` }), 400, "validation_failed");
    expect(bad.detail).toContain("percent-encoding");
    expect(bad.errors).toEqual([{ path: "url", message: "is malformed (bad percent-encoding)" }]);
    const long = expectProblem(await raw("GET", `/v1/wallets/${"w".repeat(300)}`, { authorization: `Bearer ${token}` }), 400, "validation_failed");
    expect(long.detail).toBe("a path parameter is longer than 200 characters");
    expect(long.errors).toEqual([{ path: "params", message: "has a value that is longer than 200 characters" }]);
  });

  it("answers the router's refusal with 401 for a token that does not verify", async () => {
    const res = await raw("GET", "/v1/wallets/%zz", { authorization: "Bearer not.a.jwt" });
    expectProblem(res, 401, "unauthorized");
    expect(res.headers["www-authenticate"]).toContain('error="invalid_token"');
  });

  it("answers a request whose request line and headers are too long with a problem+json 400 carrying its X-Request-Id", async () => {
    const res = await raw("GET", `/v1/wallets?x=${"a".repeat(20_000)}`, { authorization: `Bearer ${token}` });
    const body = expectProblem(res, 400, "validation_failed");
    expect(body.detail).toContain("too long");
    expect(res.headers["x-request-id"]).toBe(body.requestId);
  });
});

describe("unknown query parameters are refused on every /v1 route", () => {
  const auth = () => ({ authorization: `Bearer ${token}` });

  it.each([
    ["GET", () => `/v1/wallets/${walletId}?include=everything`],
    ["GET", () => `/v1/risk/alerts/alr_missing?x=1`],
    ["POST", () => `/v1/risk/alerts?notify=false`],
    ["PATCH", () => `/v1/wallets/${walletId}?force=1`],
    ["DELETE", () => `/v1/wallets/${walletId}?keepAlerts=true`],
    ["GET", () => `/v1/notifications/ntf_missing?verbose=1`],
    ["PUT", () => `/v1/risk/labels?dryRun=1`],
    ["POST", () => `/v1/ingest/transactions?async=1`],
  ])("answers %s with an unknown parameter with 400 naming it", async (method, path) => {
    const body =
      method === "POST" && path().startsWith("/v1/risk/alerts")
        ? { walletId, condition: "large_transfer", threshold: 1000, notificationMethod: "webhook", webhookUrl: "https://hooks.example.com/a" }
        : method === "PATCH"
          ? { alias: "renamed" }
          : method === "PUT"
            ? { labels: [{ address: randomAddress(), category: "scam", score: 80 }] }
            : method === "POST"
              ? { transactions: [makeTransaction()] }
              : undefined;
    const res = await t.app.inject({ method: method as "GET", url: path(), headers: auth(), ...(body ? { payload: body } : {}) });
    const parsed = problem(res, 400, "validation_failed") as { errors?: Array<{ path: string }> };
    expect(parsed.errors?.map((e) => e.path).join(" ")).toMatch(/query/);
  });

  it("left everything as it was: the wallet neither renamed nor deleted, no label, no transaction, no alert stored", async () => {
    const res = await t.app.inject({ url: `/v1/wallets/${walletId}`, headers: auth() });
    expect(res.statusCode).toBe(200);
    expect(res.json().alias).not.toBe("renamed");
    const [counts] = await t.deps.sql<{ labels: number; transactions: number; alerts: number }[]>`
      select (select count(*)::int from risk_labels where category = 'scam') as labels,
             (select count(*)::int from transactions) as transactions,
             (select count(*)::int from alerts) as alerts`;
    expect(counts).toEqual({ labels: 0, transactions: 0, alerts: 0 });
  });
});
