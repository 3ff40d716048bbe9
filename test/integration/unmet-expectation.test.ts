// A request whose Expect header asks for something other than 100-continue: Node answered it
// itself with a bare 417 (no body, no X-Request-Id, before the token was checked). It is a
// problem+json 400 with X-Request-Id now, after the token is checked, as the OpenAPI document
// says of every operation; Expect: 100-continue still gets its interim 100 and is served. A
// listening server: app.inject() does not go through Node's HTTP parser.
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { randomAddress } from "../helpers/chain.ts";
import { createContract, type Contract, type OpenApiDocument } from "../helpers/openapi-contract.ts";
import { openConnection, type RawAnswer } from "../helpers/raw-http.ts";

let t: TestApp;
let port: number;
let contract: Contract;
let token: string;

beforeAll(async () => {
  t = await startTestApp("unmet-expectation");
  contract = createContract((await t.app.inject({ url: "/v1/openapi.json" })).json<OpenApiDocument>());
  token = await t.token("alice");
  await t.app.listen({ port: 0, host: "127.0.0.1" });
  port = (t.app.server.address() as AddressInfo).port;
});
afterAll(async () => {
  await t.close();
});

/** One POST /v1/wallets, with its answers (an interim 100 is one of them). */
async function trackWallet(headers: Record<string, string>): Promise<RawAnswer[]> {
  const connection = await openConnection(port);
  connection.send("POST", "/v1/wallets", { "content-type": "application/json", connection: "close", ...headers }, JSON.stringify({ address: randomAddress() }));
  return connection.answers;
}

describe("an Expect header other than 100-continue", () => {
  it("is a problem+json 400 naming the header, with X-Request-Id, once the token is accepted", async () => {
    const answers = await trackWallet({ authorization: `Bearer ${token}`, expect: "something", "x-request-id": "expect-1" });
    expect(answers.map((answer) => answer.statusCode)).toEqual([400]);
    const [refused] = answers as [RawAnswer];
    expect(contract.check("POST", "/v1/wallets", refused)).toEqual([]);
    expect(refused.headers["x-request-id"]).toBe("expect-1");
    const message = "asks for an expectation this server cannot meet; send no Expect, or Expect: 100-continue";
    expect(JSON.parse(refused.body)).toMatchObject({
      status: 400,
      code: "validation_failed",
      detail: `headers.expect ${message}`,
      errors: [{ path: "headers.expect", message }],
      requestId: "expect-1",
    });

    // Without a token it is a 401, whatever else is wrong with the request (DESIGN.md section 3).
    const [unauthenticated] = (await trackWallet({ expect: "something" })) as [RawAnswer];
    expect(unauthenticated.statusCode).toBe(401);
    expect(contract.check("POST", "/v1/wallets", unauthenticated)).toEqual([]);

    // Expect: 100-continue is what clients send; it is served as before.
    const continued = await trackWallet({ authorization: `Bearer ${token}`, expect: "100-continue" });
    expect(continued.map((answer) => answer.statusCode)).toEqual([100, 201]);
  });
});
