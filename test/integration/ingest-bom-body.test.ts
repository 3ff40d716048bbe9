// A body that starts with a UTF-8 byte order mark (.NET's Encoding.UTF8, Windows PowerShell's
// Out-File) is JSON to the app's parser, which skips the mark, on every route. The check of the
// amount literals a double rounds reads the body's bytes itself: it skips the mark too, so such a
// body holding an over-precise amount gets the answer it gets without the mark — a 400 naming the
// amount on native ingest, that one item refused and kept on the Helius webhook — never a 500
// (which would make Helius retry the delivery and then drop every item of it).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { randomAddress, randomSignature } from "../helpers/chain.ts";
import { bearer, expectProblem, makeTransaction } from "../helpers/seed.ts";

const SECRET = "ingest-bom-body-auth-header-0123456";
const BOM = "\ufeff";
const MESSAGE = "has more significant digits than the service keeps exactly (about 15); it would be judged as a rounded amount";

let t: TestApp;
let token: string;
beforeAll(async () => {
  t = await startTestApp("ingest-bom-body", { HELIUS_AUTH_HEADER: SECRET });
  token = await t.token("ingestor", "ingest:write");
});
afterAll(async () => {
  await t.close();
});

const post = (url: string, headers: Record<string, string>, text: string) =>
  t.app.inject({ method: "POST", url, headers: { ...headers, "content-type": "application/json" }, payload: Buffer.from(text, "utf8") });

/** A native transaction's JSON with its amount written as `literal`, exactly. */
const nativeText = (literal: string) => JSON.stringify({ ...makeTransaction(), amount: "@" }).replace('"amount":"@"', `"amount":${literal}`);

/** A Helius item's JSON with one token transfer whose tokenAmount is written as `literal`, exactly. */
const heliusText = (signature: string, literal: string) =>
  JSON.stringify({
    signature,
    slot: 280_000_000,
    timestamp: 1_720_000_000,
    fee: 5000,
    feePayer: randomAddress(),
    type: "TRANSFER",
    tokenTransfers: [{ fromUserAccount: randomAddress(), toUserAccount: randomAddress(), mint: randomAddress(), tokenAmount: "@" }],
  }).replace('"tokenAmount":"@"', `"tokenAmount":${literal}`);

describe("a body starting with a UTF-8 byte order mark", () => {
  it("on POST /v1/ingest/transactions, holding an over-precise amount: 400 naming it, as without the mark", async () => {
    const body = expectProblem(
      await post("/v1/ingest/transactions", bearer(token), `${BOM}{"transactions":[${nativeText("1.5")},${nativeText("9.99999999999999999")}]}`),
      400,
      "validation_failed",
    );
    expect(body.errors).toEqual([{ path: "body.transactions.1.amount", message: MESSAGE }]);
    expect(Number((await t.deps.sql`select count(*)::int as n from transactions`)[0]!.n)).toBe(0);
  });

  it("on POST /v1/ingest/helius, holding an over-precise tokenAmount in one item: 202, that item refused and kept, the other stored", async () => {
    const [valid, refused] = [randomSignature(), randomSignature()];
    const res = await post("/v1/ingest/helius", { authorization: SECRET }, `${BOM}[${heliusText(valid, "1")},${heliusText(refused, "9.99999999999999999")}]`);
    expect(res.statusCode, res.body).toBe(202);
    expect(res.json()).toEqual({
      accepted: 1,
      duplicates: 0,
      skipped: 0,
      rejected: [{ index: 1, signature: refused, errors: [{ path: "body.1.tokenTransfers.0.tokenAmount", message: MESSAGE }] }],
    });
    expect((await t.deps.sql`select signature from transactions`).map((row) => row.signature)).toEqual([valid]);
    const kept = await t.deps.sql`select signature, item->'tokenTransfers'->0->>'tokenAmount' as amount from helius_rejected_items`;
    expect(kept.map((row) => ({ ...row }))).toEqual([{ signature: refused, amount: "9.99999999999999999" }]);
  });
});
