// A 400 lists the first problems of a request and says how many more there are: a body
// within the 1 MiB limit can hold half a million bad items, and listing each of them made a
// 44 MB answer. Every route's schema validation goes through the one error handler.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_LISTED_ERRORS } from "../../src/http/error-handler.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { problem } from "../helpers/alert-fixtures.ts";
import { bearer, trackWallet } from "../helpers/seed.ts";

let t: TestApp;
let token: string;
let walletId: string;
/** The message of each error the routes raised, as Fastify made it. */
const errorMessages: string[] = [];

beforeAll(async () => {
  t = await startTestApp("validation-error-cap", {}, {
    beforeReady: (app) =>
      app.addHook("onError", (_request, _reply, error, done) => {
        errorMessages.push(error.message);
        done();
      }),
  });
  token = await t.token("capper");
  ({ walletId } = await trackWallet(t, token));
});
afterAll(async () => {
  await t.close();
});

type Answer = Awaited<ReturnType<TestApp["app"]["inject"]>>;

/** The 400's field errors, after checking that its detail says exactly what they say. */
function listedErrors(res: Answer): { path: string; message: string }[] {
  const body = problem(res, 400, "validation_failed");
  const errors = body.errors ?? [];
  expect(body.detail).toBe(errors.map((e) => `${e.path} ${e.message}`).join("; "));
  return errors;
}

const send = (method: "PATCH" | "POST", url: string, payload: string) =>
  t.app.inject({ method, url, headers: { ...bearer(token), "content-type": "application/json" }, payload });

describe("a 400 with many problems", () => {
  it(`lists the first ${MAX_LISTED_ERRORS} problems of 500,000 bad tags, then how many more, in a small answer`, async () => {
    const payload = `{"tags":[${Array.from({ length: 500_000 }, () => "0").join(",")}]}`;
    expect(payload.length).toBeLessThan(1024 * 1024);
    const res = await send("PATCH", `/v1/wallets/${walletId}`, payload);
    const errors = listedErrors(res);
    expect(errors).toHaveLength(MAX_LISTED_ERRORS + 1);
    // maxItems first, then each item that is not a string: 500,001 problems in all.
    expect(errors[0]).toEqual({ path: "body.tags", message: "must list at most 20 items" });
    expect(errors[1]).toEqual({ path: "body.tags.0", message: "must be a string" });
    expect(errors.at(-1)).toEqual({ path: "body", message: `has ${500_001 - MAX_LISTED_ERRORS} more problems not listed` });
    expect(res.payload.length).toBeLessThan(20_000);
    // Fastify's own message for it is not the 500,000 issues joined either (nothing reads it).
    expect(errorMessages.at(-1)).toBe("body has 500001 problems");
  });

  it("caps a native ingest batch of 60,000 invalid transactions the same way (maxItems does not stop the checking)", async () => {
    // Numbers, not objects: 60,000 objects are more than the route's bound on arrays and
    // objects (json-container-bound.ts), refused before they are parsed or checked.
    const res = await send("POST", "/v1/ingest/transactions", `{"transactions":[${Array.from({ length: 60_000 }, () => "1").join(",")}]}`);
    const errors = listedErrors(res);
    expect(errors).toHaveLength(MAX_LISTED_ERRORS + 1);
    expect(errors[0]).toEqual({ path: "body.transactions", message: "must list 1 to 1000 items" });
    // One problem per item, and the list too long: 60,001.
    expect(errors.at(-1)).toEqual({ path: "body", message: `has ${60_001 - MAX_LISTED_ERRORS} more problems not listed` });
    expect(res.payload.length).toBeLessThan(20_000);
  });

  it("caps 90,000 unknown fields of an alert create", async () => {
    const fields = Array.from({ length: 90_000 }, (_, i) => `"f${i}":1`).join(",");
    const res = await send("POST", "/v1/risk/alerts", `{${fields}}`);
    const errors = listedErrors(res);
    expect(errors).toHaveLength(MAX_LISTED_ERRORS + 1);
    expect(errors).toContainEqual({ path: "body.f0", message: "is not a known field" });
    expect(errors.at(-1)!.path).toBe("body");
    expect(res.payload.length).toBeLessThan(20_000);
  });

  it("says where the unlisted problems of a query string are (query, as the listed ones say)", async () => {
    const query = Array.from({ length: MAX_LISTED_ERRORS + 7 }, (_, i) => `p${i}=1`).join("&");
    const errors = listedErrors(await t.app.inject({ url: `/v1/wallets?${query}`, headers: bearer(token) }));
    expect(errors).toHaveLength(MAX_LISTED_ERRORS + 1);
    expect(errors[0]).toEqual({ path: "query.p0", message: "is not a known field" });
    expect(errors.at(-1)).toEqual({ path: "query", message: "has 7 more problems not listed" });
  });

  it("lists every problem, with no count, when there are no more than the cap", async () => {
    const errors = listedErrors(await send("PATCH", `/v1/wallets/${walletId}`, `{"tags":[${Array.from({ length: 20 }, (_, i) => i).join(",")}]}`));
    expect(errors).toHaveLength(20);
    expect(errors.every((e) => e.message === "must be a string")).toBe(true);
  });

  it("shows an unknown field's very long name cut short, not whole (twice: errors and detail)", async () => {
    const name = "x".repeat(500_000);
    const errors = listedErrors(await send("PATCH", `/v1/wallets/${walletId}`, `{"${name}":1}`));
    expect(errors).toEqual([{ path: `body.${"x".repeat(195)}…`, message: "is not a known field" }]);
  });
});
