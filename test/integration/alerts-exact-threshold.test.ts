// A threshold is judged by the literal sent, as an ingested amount is: JSON.parse reads
// 9999999.999999999 as 9999999.999999998 (and 99999999.999999999 as 100000000) before any check
// runs, so such a create was answered 201 with a threshold its owner never asked for, and fired
// on a transfer of 9999999.999999998, below the one requested. Now it is a 400 and nothing is
// stored, on POST and PATCH alike.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { auth, fieldErrors, insertWallet, problem, storedAlert } from "../helpers/alert-fixtures.ts";

let t: TestApp;
let alice: string;
let walletId: string;

beforeAll(async () => {
  t = await startTestApp("alerts-exact-threshold");
  alice = await t.token("alice");
  ({ walletId } = await insertWallet(t, "alice"));
});
afterAll(async () => {
  await t.close();
});

const REFUSED =
  "body.threshold has more significant digits than the service keeps exactly (about 15); it would be judged as a rounded threshold";

/** A create whose threshold is written as `literal` exactly (JavaScript has no number that writes as these). */
const createBody = (literal: string, key = "threshold") =>
  `{"walletId":"${walletId}","condition":"large_transfer","${key}":${literal},"notificationMethod":"email","recipient":"desk@fund.example"}`;

const send = (method: "POST" | "PATCH", url: string, text: string, headers: Record<string, string> = auth(alice)) =>
  t.app.inject({ method, url, headers: { ...headers, "content-type": "application/json" }, payload: text });

const create = (text: string, headers?: Record<string, string>) => send("POST", "/v1/risk/alerts", text, headers);

const alertCount = async () => Number((await t.deps.sql`select count(*)::int as n from alerts where wallet_id = ${walletId}`)[0]!.n);

describe("POST /v1/risk/alerts with a threshold literal a double rounds", () => {
  it.each(["9999999.999999999", "99999999.999999999", "1e-400", "1.0000000000000000001"])(
    "answers 400 naming body.threshold for %s, and stores nothing",
    async (literal) => {
      const before = await alertCount();
      expect(fieldErrors(await create(createBody(literal)))).toEqual([REFUSED]);
      expect(await alertCount()).toBe(before);
    },
  );

  it("creates the alert when the literal reads back exactly, 9999999.999999998 as sent", async () => {
    const res = await create(createBody("9999999.999999998"));
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().threshold).toBe(9999999.999999998);
    expect((await storedAlert(t, res.json().alertId))?.threshold).toBe("9999999.999999998");
  });

  it("reads a key spelled with an escape as the threshold it is", async () => {
    expect(fieldErrors(await create(createBody("9999999.999999999", "thres\\u0068old")))).toEqual([REFUSED]);
  });

  it("answers 401 to a caller without a token, before looking at the threshold", async () => {
    problem(await create(createBody("9999999.999999999"), {}), 401, "unauthorized");
  });

  it("does not record a refused create under its Idempotency-Key: the corrected retry creates the alert", async () => {
    const before = await alertCount();
    const refused = await create(createBody("9999999.999999999"), { ...auth(alice), "idempotency-key": "exact-threshold-1" });
    expect(refused.statusCode).toBe(400);
    const retried = await create(createBody("9999999.999999998"), { ...auth(alice), "idempotency-key": "exact-threshold-1" });
    expect(retried.statusCode, retried.body).toBe(201);
    expect(retried.headers["idempotent-replayed"]).toBeUndefined();
    expect(retried.json().threshold).toBe(9999999.999999998);
    expect(await alertCount()).toBe(before + 1);
  });

  it("does not replay the alert of the rounded threshold to a request sending the literal under the same key", async () => {
    const made = await create(createBody("9999999.999999998"), { ...auth(alice), "idempotency-key": "exact-threshold-2" });
    expect(made.statusCode, made.body).toBe(201);
    // Parsed, the two bodies are the same: only the literal tells them apart.
    const retry = await create(createBody("9999999.999999999"), { ...auth(alice), "idempotency-key": "exact-threshold-2" });
    expect(fieldErrors(retry)).toEqual([REFUSED]);
  });
});

describe("PATCH /v1/risk/alerts/{id} with a threshold literal a double rounds", () => {
  it("answers 400 naming body.threshold, and leaves the alert as it was", async () => {
    const made = await create(createBody("1000"));
    const { alertId } = made.json() as { alertId: string };
    const url = `/v1/risk/alerts/${alertId}`;
    expect(fieldErrors(await send("PATCH", url, `{"threshold":99999999.999999999,"status":"paused"}`))).toEqual([REFUSED]);
    expect(await storedAlert(t, alertId)).toMatchObject({ threshold: "1000.000000000", status: "active" });

    const changed = await send("PATCH", url, `{"threshold":99999999.99999999}`);
    expect(changed.statusCode, changed.body).toBe(200);
    expect(changed.json().threshold).toBe(99999999.99999999);
  });

  it("answers 401 to a caller without a token, before looking at the threshold", async () => {
    problem(await send("PATCH", "/v1/risk/alerts/alr_00000000000000000000000000", `{"threshold":9999999.999999999}`, {}), 401, "unauthorized");
  });
});
