// A key given twice in one JSON object is refused with a 400 naming it. JSON.parse keeps the
// last value without a word: {"address":"A","address":"B"} tracked B (or, B being tracked, was
// a 409 about a wallet the client never asked for), and a PATCH with "status" twice did
// whichever came last. The Helius webhook, which Helius calls, refuses the item, never the
// delivery (helius-repeated-keys.test.ts).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { auth, fieldErrors, insertWallet, problem } from "../helpers/alert-fixtures.ts";
import { randomAddress } from "../helpers/chain.ts";
import { HELIUS_SECRET, helius } from "../helpers/contract-samples.ts";
import { makeTransaction } from "../helpers/seed.ts";

let t: TestApp;
let headers: Record<string, string>;
const OWNER = "repeat-caller";
const REPEATED = "is given more than once; give it once";

beforeAll(async () => {
  t = await startTestApp("repeated-json-keys", { HELIUS_AUTH_HEADER: HELIUS_SECRET });
  headers = { ...auth(await t.token(OWNER)), "content-type": "application/json" };
});
afterAll(async () => {
  await t.close();
});

const send = (method: "POST" | "PATCH" | "PUT", url: string, payload: string) => t.app.inject({ method, url, headers, payload });
const tracked = async (address: string) => (await t.deps.sql`select 1 from tracked_wallets where address = ${address}`).length > 0;

describe("a JSON key given twice", () => {
  it("refuses a wallet create with the address twice, naming it, and tracks neither address", async () => {
    const [first, second] = [randomAddress(), randomAddress()];
    const res = await send("POST", "/v1/wallets", `{"address":"${first}","address":"${second}"}`);
    expect(fieldErrors(res)).toEqual([`body.address ${REPEATED}`]);
    expect(await tracked(first)).toBe(false);
    expect(await tracked(second)).toBe(false);
  });

  it("compares keys as decoded: an escaped spelling of the same key is the same key", async () => {
    const res = await send("POST", "/v1/wallets", `{"address":"${randomAddress()}", "addr\\u0065ss" :"${randomAddress()}"}`);
    expect(fieldErrors(res)).toEqual([`body.address ${REPEATED}`]);
  });

  it("refuses an alert create with notificationMethod twice and creates no alert", async () => {
    const { walletId } = await insertWallet(t, OWNER);
    const body = `{"walletId":"${walletId}","condition":"unusual_activity","notificationMethod":"email","recipient":"a@example.com","notificationMethod":"webhook","webhookUrl":"http://127.0.0.1:9/hook"}`;
    expect(fieldErrors(await send("POST", "/v1/risk/alerts", body))).toEqual([`body.notificationMethod ${REPEATED}`]);
    const [row] = await t.deps.sql`select 1 from alerts where wallet_id = ${walletId}`;
    expect(row).toBeUndefined();
  });

  it("refuses a PATCH with status twice and leaves the alert as it was", async () => {
    const { walletId } = await insertWallet(t, OWNER);
    const created = await t.app.inject({
      method: "POST",
      url: "/v1/risk/alerts",
      headers,
      payload: JSON.stringify({ walletId, condition: "unusual_activity", notificationMethod: "webhook", webhookUrl: "http://127.0.0.1:9/hook" }),
    });
    const { alertId } = created.json();
    const res = await send("PATCH", `/v1/risk/alerts/${alertId}`, '{"status":"paused","status":"active"}');
    expect(fieldErrors(res)).toEqual([`body.status ${REPEATED}`]);
    const [row] = await t.deps.sql<{ status: string }[]>`select status from alerts where id = ${alertId}`;
    expect(row?.status).toBe("active");
  });

  it("names a key repeated deep in an ingest batch by its place, and stores nothing of the batch", async () => {
    const transactions = Array.from({ length: 5 }, () => makeTransaction());
    const items = transactions.map((tx, i) => {
      const text = JSON.stringify(tx);
      return i === 3 ? text.replace('"amount":1.5', '"amount":1.5,"amount":1500') : text;
    });
    const res = await send("POST", "/v1/ingest/transactions", `{"transactions":[${items.join(",")}]}`);
    expect(fieldErrors(res)).toEqual([`body.transactions.3.amount ${REPEATED}`]);
    const signatures = transactions.map((tx) => tx.signature);
    expect(await t.deps.sql`select 1 from transactions where signature = any(${signatures})`).toHaveLength(0);
  });

  it("accepts the same key in different objects, and text that only looks like a key", async () => {
    // `\":` in a string is a quote and a colon that are not a key's end.
    const address = randomAddress();
    const res = await send("POST", "/v1/wallets", `{"address":"${address}","alias":"a\\": b \\":"}`);
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().alias).toBe('a": b ":');
    const batch = JSON.stringify({ transactions: [makeTransaction(), makeTransaction()] });
    expect((await send("POST", "/v1/ingest/transactions", batch)).statusCode).toBe(202);
  });

  it("never refuses a Helius delivery for it, a 400 would lose every item of it: here a field the webhook ignores, stored", async () => {
    const [item] = helius() as Record<string, unknown>[];
    const text = `[{"note":"first","note":"second",${JSON.stringify(item).slice(1)}]`;
    const res = await t.app.inject({
      method: "POST",
      url: "/v1/ingest/helius",
      headers: { authorization: HELIUS_SECRET, "content-type": "application/json" },
      payload: text,
    });
    expect(res.statusCode, res.body).toBe(202);
    expect(res.json().rejected).toEqual([]);
  });

  it("shows a very long repeated key cut short", async () => {
    const key = "k".repeat(10_000);
    const body = problem(await send("POST", "/v1/wallets", `{"${key}":1,"${key}":2}`), 400, "validation_failed");
    expect(body.errors?.[0]?.path).toBe(`body.${"k".repeat(195)}…`);
  });
});
