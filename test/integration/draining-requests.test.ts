// While the API drains on shutdown (SIGTERM → app.close()), a request can still arrive on a
// connection that is open: pipelined, or sent on a busy keep-alive connection (a load balancer,
// the simulator, an SDK). It is answered as every other 503: problem+json `unavailable`, with
// Retry-After and X-Request-Id, as the OpenAPI document says, and only after the token is
// checked (DESIGN.md section 3). A real listening server and raw sockets: app.inject() has no
// connection to keep open.
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { createContract, type Contract, type OpenApiDocument } from "../helpers/openapi-contract.ts";
import { openConnection } from "../helpers/raw-http.ts";

const HOLD = "x-test-hold";
let t: TestApp;
let contract: Contract;
let token: string;

// A request sent with HOLD waits in its handler until released: it keeps its connection busy
// while the app begins to close.
let release!: () => void;
const released = new Promise<void>((resolve) => (release = resolve));
const held = createCounter();
let closingBegan!: () => void;
const closing = new Promise<void>((resolve) => (closingBegan = resolve));

/** Counts events; reach(n) resolves once n have happened. */
function createCounter() {
  let count = 0;
  let waiting: { at: number; resolve: () => void }[] = [];
  return {
    add: () => {
      count++;
      waiting = waiting.filter((waiter) => (count >= waiter.at ? (waiter.resolve(), false) : true));
    },
    reach: (at: number) => (count >= at ? Promise.resolve() : new Promise<void>((resolve) => waiting.push({ at, resolve }))),
  };
}

beforeAll(async () => {
  t = await startTestApp("draining-requests", {}, {
    beforeReady: (app) => {
      app.addHook("preHandler", async (request) => {
        if (request.headers[HOLD] === undefined) return;
        held.add();
        await released;
      });
      // After the app's own preClose hooks: closing has begun.
      app.addHook("preClose", (done) => {
        closingBegan();
        done();
      });
    },
  });
  contract = createContract((await t.app.inject({ url: "/v1/openapi.json" })).json<OpenApiDocument>());
  token = await t.token("alice");
});
afterAll(async () => {
  release();
  await t.close();
});

describe("a request that arrives while the API drains", () => {
  it("is a problem+json 503 with Retry-After and X-Request-Id, and still a 401 without a token", async () => {
    await t.app.listen({ port: 0, host: "127.0.0.1" });
    const { port } = t.app.server.address() as AddressInfo;
    const withToken = await openConnection(port);
    const withoutToken = await openConnection(port);
    const bearer = { authorization: `Bearer ${token}` };
    withToken.send("GET", "/v1/wallets", { ...bearer, [HOLD]: "1" });
    withoutToken.send("GET", "/v1/wallets", { ...bearer, [HOLD]: "1" });
    await held.reach(2);

    // Both connections are busy: close() leaves them open until their requests are answered.
    const arrived = createCounter();
    t.app.server.on("request", (request: { headers: Record<string, unknown> }) => {
      if (request.headers[HOLD] === undefined) arrived.add();
    });
    const closed = t.app.close();
    await closing;
    withToken.send("GET", "/v1/wallets", { ...bearer, "x-request-id": "during-drain" });
    withoutToken.send("GET", "/v1/wallets");
    await arrived.reach(2);
    release();
    const [first, second] = await Promise.all([withToken.answers, withoutToken.answers]);
    await closed;

    expect(first.map((answer) => answer.statusCode)).toEqual([200, 503]);
    const refused = first[1]!;
    expect(contract.check("GET", "/v1/wallets", refused)).toEqual([]);
    expect(refused.headers["content-type"]).toMatch(/^application\/problem\+json/);
    expect(refused.headers["retry-after"]).toBe("1");
    expect(refused.headers["x-request-id"]).toBe("during-drain");
    expect(refused.headers.connection).toBe("close");
    expect(JSON.parse(refused.body)).toEqual({
      type: "https://wallet-alerts.dev/problems/unavailable",
      title: "Service unavailable",
      status: 503,
      detail: "the server is shutting down; send the request again, on a new connection",
      code: "unavailable",
      requestId: "during-drain",
    });

    expect(second.map((answer) => answer.statusCode)).toEqual([200, 401]);
    expect(contract.check("GET", "/v1/wallets", second[1]!)).toEqual([]);
    expect(JSON.parse(second[1]!.body)).toMatchObject({ code: "unauthorized", requestId: second[1]!.headers["x-request-id"] });
  });
});
