// The contract checker of the OpenAPI contract test: it must refuse each kind of drift it
// claims to find, or the integration test's silence would mean nothing.
import { describe, expect, it } from "vitest";
import { createContract, registeredApiRoutes, type Answer, type OpenApiDocument } from "../helpers/openapi-contract.ts";

const problem = { "application/problem+json": { schema: { $ref: "#/components/schemas/Problem" } } };
const document: OpenApiDocument = {
  openapi: "3.1.0",
  components: {
    schemas: {
      Problem: { type: "object", required: ["status", "code"], properties: { status: { type: "integer" }, code: { type: "string" } } },
    },
  },
  paths: {
    "/v1/things/{thingId}": {
      get: {
        responses: {
          "200": {
            content: {
              "application/json": {
                schema: {
                  type: "object",
                  required: ["id", "count", "seen"],
                  properties: { id: { type: "string" }, count: { type: "integer" }, seen: { type: ["string", "null"], format: "date-time" } },
                },
              },
            },
          },
          "404": { content: problem },
          "429": { headers: { "retry-after": { required: true, schema: { type: "string" } } }, content: problem },
        },
      },
      delete: { responses: { "204": { description: "deleted" } } },
    },
    "/v1/things/{thingId}/parts": { get: { security: [], responses: { default: { content: problem } } } },
    "/v1/things/{thingId}/hooks": { post: { security: [{ sharedSecret: [] }], responses: { default: { content: problem } } } },
    "/v1/things/{thingId}/owner": { get: { security: [{ bearer: ["things:read"] }, { bearer: ["admin"] }], responses: { default: { content: problem } } } },
  },
};

const json = (statusCode: number, body: unknown, headers: Record<string, string> = {}): Answer => ({
  statusCode,
  headers: { "content-type": "application/json; charset=utf-8", ...headers },
  body: JSON.stringify(body),
});
const problemAnswer = (statusCode: number, headers: Record<string, string> = {}): Answer => ({
  ...json(statusCode, { status: statusCode, code: "x" }),
  headers: { "content-type": "application/problem+json; charset=utf-8", ...headers },
});

describe("the OpenAPI contract checker", () => {
  const contract = createContract(document);
  const check = (method: string, url: string, answer: Answer) => contract.check(method, url, answer);

  it("accepts an answer the document describes, through a $ref into components", () => {
    expect(check("GET", "/v1/things/t1?x=1", json(200, { id: "t1", count: 2, seen: null }))).toEqual([]);
    expect(check("GET", "/v1/things/t1", problemAnswer(404))).toEqual([]);
    expect(check("DELETE", "/v1/things/t1", { statusCode: 204, headers: {}, body: "" })).toEqual([]);
  });

  it("refuses a status the operation does not list, unless a default covers it", () => {
    expect(check("GET", "/v1/things/t1", problemAnswer(409))).toEqual([expect.stringMatching(/^GET \/v1\/things\/\{thingId\} → 409: status not documented/)]);
    expect(check("GET", "/v1/things/t1/parts", problemAnswer(418))).toEqual([]);
  });

  it("refuses a media type other than the documented one", () => {
    expect(check("GET", "/v1/things/t1", { ...problemAnswer(404), headers: { "content-type": "application/json" } })).toEqual([
      expect.stringContaining("Content-Type application/json is not the documented application/problem+json"),
    ]);
  });

  it("refuses an answer without a header the document marks required", () => {
    expect(check("GET", "/v1/things/t1", problemAnswer(429))).toEqual([expect.stringContaining("required header retry-after missing")]);
    expect(check("GET", "/v1/things/t1", problemAnswer(429, { "retry-after": "5" }))).toEqual([]);
  });

  it("refuses a body that breaks the schema: a null integer, a bad date-time, a missing or an undocumented field", () => {
    const refusals = (body: unknown) => check("GET", "/v1/things/t1", json(200, body));
    expect(refusals({ id: "t1", count: null, seen: null })).toEqual([expect.stringContaining("/count must be integer")]);
    expect(refusals({ id: "t1", count: 1, seen: "yesterday" })).toEqual([expect.stringContaining('/seen must match format "date-time"')]);
    expect(refusals({ id: "t1", seen: null })).toEqual([expect.stringContaining("must have required property 'count'")]);
    expect(refusals({ id: "t1", count: 1, seen: null, secret: "x" })).toEqual([expect.stringContaining("must NOT have additional properties")]);
    expect(check("GET", "/v1/things/t1", problemAnswer(404)).length).toBe(0);
    expect(check("GET", "/v1/things/t1", { ...problemAnswer(404), body: '{"status":"404","code":"x"}' })).toEqual([expect.stringContaining("/status must be integer")]);
  });

  it("refuses a body on a response documented without one, and a request no operation describes", () => {
    expect(check("DELETE", "/v1/things/t1", json(204, {}))).toEqual([expect.stringContaining("documented without a body")]);
    expect(check("POST", "/v1/things/t1", json(200, {}))).toEqual(["POST /v1/things/t1: the document has no operation for it"]);
  });

  it("records the statuses each operation answered with, and says which operations are public: no security, or a scheme other than the bearer", () => {
    expect([...(contract.seen.get("GET /v1/things/{thingId}") ?? [])].sort()).toEqual([200, 404, 409, 429]);
    expect(contract.isPublic("GET /v1/things/{thingId}/parts")).toBe(true);
    expect(contract.isPublic("POST /v1/things/{thingId}/hooks")).toBe(true);
    expect(contract.isPublic("GET /v1/things/{thingId}")).toBe(false);
    expect(contract.isPublic("GET /v1/things/{thingId}/owner")).toBe(false);
  });
});

describe("the /v1 routes read from Fastify's printRoutes tree", () => {
  it("joins nested segments, names parameters as OpenAPI does, and leaves out HEAD and other prefixes", () => {
    const tree = [
      "├── /healthz (GET, HEAD)",
      "├── /v1/wallets (GET, HEAD, POST)",
      "│   └── /:walletId (GET, HEAD, PATCH, DELETE)",
      "├── /v1/risk/alerts (POST, GET, HEAD)",
      "│   └── /:alertId (GET, HEAD)",
      "│       └── /test (POST)",
      "└── /v1/notifications/:notificationId (GET, HEAD)",
    ].join("\n");
    expect(registeredApiRoutes(tree)).toEqual([
      "DELETE /v1/wallets/{walletId}",
      "GET /v1/notifications/{notificationId}",
      "GET /v1/risk/alerts",
      "GET /v1/risk/alerts/{alertId}",
      "GET /v1/wallets",
      "GET /v1/wallets/{walletId}",
      "PATCH /v1/wallets/{walletId}",
      "POST /v1/risk/alerts",
      "POST /v1/risk/alerts/{alertId}/test",
      "POST /v1/wallets",
    ]);
  });
});
