// A refusal tells the caller what to fix, in the field's own terms: a parameter given twice, a
// PATCH that changes nothing, an id no request could carry. And the OpenAPI document says
// what the server enforces, so a client validating against it is not refused by surprise.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { bearer, trackWallet } from "../helpers/seed.ts";

let t: TestApp;
let alice: string;
beforeAll(async () => {
  t = await startTestApp("refusal-messages");
  alice = await t.token("alice", undefined, { email: "desk@example.com" });
});
afterAll(async () => {
  await t.close();
});

const errorsOf = async (method: "GET" | "PATCH", url: string, payload?: unknown) => {
  const res = await t.app.inject({ method, url, headers: bearer(alice), ...(payload === undefined ? {} : { payload: payload as object }) });
  expect(res.statusCode).toBe(400);
  expect(res.headers["content-type"]).toMatch(/^application\/problem\+json/);
  return (res.json() as { errors: { path: string; message: string }[] }).errors;
};

describe("refusal messages", () => {
  it("says a query parameter was given more than once", async () => {
    const wallet = await trackWallet(t, alice);
    expect(await errorsOf("GET", `/v1/transactions?walletId=${wallet.walletId}&limit=10&limit=20`)).toEqual([
      { path: "query.limit", message: "is given more than once; give it once" },
    ]);
    expect(await errorsOf("GET", `/v1/transactions?walletId=${wallet.walletId}&type=transfer&type=swap`)).toEqual([
      { path: "query.type", message: "is given more than once; give it once" },
    ]);
  });

  it("names the fields an empty PATCH could change", async () => {
    const wallet = await trackWallet(t, alice);
    expect(await errorsOf("PATCH", `/v1/wallets/${wallet.walletId}`, {})).toEqual([
      { path: "body", message: "must change at least one of alias, tags" },
    ]);
  });

  it("names the id field that holds a NUL, in a path and in a query", async () => {
    expect(await errorsOf("GET", "/v1/wallets/wal_%00x")).toEqual([{ path: "params.walletId", message: "must not contain a NUL character (\\u0000)" }]);
    expect(await errorsOf("GET", "/v1/transactions?walletId=wal_%00x")).toEqual([{ path: "query.walletId", message: "must not contain a NUL character (\\u0000)" }]);
  });

  it("declares in the OpenAPI document that a PATCH must change at least one field, as the server enforces", async () => {
    const doc = (await t.app.inject({ url: "/v1/openapi.json" })).json();
    const schemaOf = (path: string) => doc.paths[path].patch.requestBody.content["application/json"].schema;
    expect(schemaOf("/v1/risk/alerts/{alertId}").minProperties).toBe(1);
    expect(schemaOf("/v1/wallets/{walletId}").minProperties).toBe(1);
  });
});
