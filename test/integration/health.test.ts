import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.ts";

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp("health");
});
afterAll(async () => {
  await t.close();
});

describe("health and framework errors", () => {
  it("answers /healthz and /readyz when PostgreSQL and Redis are up", async () => {
    expect((await t.app.inject({ url: "/healthz" })).json()).toEqual({ status: "ok" });
    const ready = await t.app.inject({ url: "/readyz" });
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toMatchObject({ postgres: "up", redis: "up" });
  });

  it("answers an unknown /v1 route without a token with 401 problem+json", async () => {
    const res = await t.app.inject({ url: "/v1/nothing-here" });
    expect(res.statusCode).toBe(401);
    expect(res.headers["content-type"]).toContain("application/problem+json");
    expect(res.headers["www-authenticate"]).toContain('error="invalid_token"');
    expect(res.json()).toMatchObject({ status: 401, code: "unauthorized", requestId: expect.any(String) });
  });

  it("answers an unknown /v1 route with a valid token with 404 problem+json", async () => {
    const res = await t.app.inject({
      url: "/v1/nothing-here",
      headers: { authorization: `Bearer ${await t.token("alice")}` },
    });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ code: "not_found" });
  });

  it("serves the OpenAPI 3.1 document without a token", async () => {
    const res = await t.app.inject({ url: "/v1/openapi.json" });
    expect(res.statusCode).toBe(200);
    expect(res.json().openapi).toBe("3.1.0");
  });

  it("describes every error response in the OpenAPI document as application/problem+json, as it is sent", async () => {
    const document = (await t.app.inject({ url: "/v1/openapi.json" })).json() as {
      paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, unknown> }> }>>;
    };
    const errorMediaTypes = new Set<string>();
    for (const operations of Object.values(document.paths)) {
      for (const { responses } of Object.values(operations)) {
        for (const [status, response] of Object.entries(responses)) {
          if (Number(status) >= 400) for (const mediaType of Object.keys(response.content ?? {})) errorMediaTypes.add(mediaType);
        }
      }
    }
    expect([...errorMediaTypes]).toEqual(["application/problem+json"]);
    const unauthorized = await t.app.inject({ url: "/v1/wallets" });
    expect(unauthorized.headers["content-type"]).toMatch(/^application\/problem\+json/);
  });

  it("documents the headers the README promises: Location on a 201, a test's 202 and a create's 409, Idempotent-Replayed on a replayed create, Cache-Control on an alert's create, Retry-After on a 429 and a 503", async () => {
    type Operation = { responses: Record<string, { headers?: Record<string, unknown> }> };
    const { paths } = (await t.app.inject({ url: "/v1/openapi.json" })).json() as { paths: Record<string, Record<string, Operation>> };
    const operations = Object.values(paths).flatMap((byMethod) => Object.values(byMethod));
    // X-Request-Id and RateLimit-* are declared on every response that carries them (openapi-headers.ts; the contract test checks them): these are the others.
    const shared = new Set(["x-request-id", "ratelimit-limit", "ratelimit-remaining", "ratelimit-reset"]);
    const namesOf = (headers: Record<string, unknown> | undefined) => Object.keys(headers ?? {}).filter((name) => !shared.has(name));
    const headersOf = (status: string) => operations.flatMap(({ responses }) => (responses[status] ? [namesOf(responses[status].headers)] : []));
    // POST /wallets; POST /risk/alerts, whose answer carries the webhook secret (no-store).
    expect(headersOf("201")).toEqual([["location"], ["location", "idempotent-replayed", "cache-control"]]);
    for (const path of ["/v1/wallets", "/v1/risk/alerts"]) {
      expect(namesOf(paths[path]!.post!.responses["409"]!.headers), path).toEqual(["location"]);
    }
    expect(namesOf(paths["/v1/risk/alerts/{alertId}/test"]!.post!.responses["202"]!.headers)).toEqual(["location"]);
    for (const status of ["429", "503"]) {
      expect(headersOf(status).length, status).toBeGreaterThan(0);
      for (const headers of headersOf(status)) expect(headers, status).toEqual(["retry-after"]);
    }
  });

  it("answers a malformed percent-encoding with 400 problem+json", async () => {
    const res = await t.app.inject({ url: "/v1/wallets/%E0%A4%A" , headers: { authorization: `Bearer ${await t.token("alice")}` } });
    expect(res.statusCode).toBe(400);
    expect(res.headers["content-type"]).toContain("application/problem+json");
  });

  it("gives the router's refusals (bad percent-encoding, an over-long id; with a token or without) the x-request-id of their body", async () => {
    const token = await t.token("alice");
    const requests = [
      { url: "/v1/wallets/%E0%A4%A", headers: { authorization: `Bearer ${token}` } },
      { url: "/v1/wallets/%E0%A4%A" },
      { url: `/v1/wallets/wal_${"a".repeat(300)}`, headers: { authorization: `Bearer ${token}` } },
    ];
    for (const request of requests) {
      const res = await t.app.inject(request);
      expect(res.statusCode, res.body).toBeGreaterThanOrEqual(400);
      expect(res.headers["x-request-id"], request.url).toBe(res.json().requestId);
    }
  });
});
