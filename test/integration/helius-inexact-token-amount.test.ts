// A tokenAmount Helius sends as a JSON number is judged by the literal sent, as a decimal
// string is by its digits. JSON.parse reads 9.99999999999999999 as 10 before any check: the item
// was accepted, stored as 10, and fired a large_transfer at 10 that the transfer never reached.
// Now such an item is refused on its own (listed in `rejected`, kept in helius_rejected_items
// with its digits) and the rest of the delivery is stored.
import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningWorkers } from "../../src/queue/run-workers.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { MINTS, randomAddress, randomSignature } from "../helpers/chain.ts";
import { createAlert, eventsOf, settled, startWorkers, track } from "../helpers/pipeline.ts";

const SECRET = "helius-inexact-token-amount-auth-0123";
const MESSAGE = "has more significant digits than the service keeps exactly (about 15); it would be judged as a rounded amount";

let t: TestApp;
let workers: RunningWorkers;
beforeAll(async () => {
  t = await startTestApp("helius-inexact-amount", { HELIUS_AUTH_HEADER: SECRET });
  workers = startWorkers(t);
});
afterAll(async () => {
  await workers.close();
  await t.close();
});

/** A token transfer item from `from`, its tokenAmount written as `literal` exactly, under `key`. */
function item(literal: string, from = randomAddress(), key = "tokenAmount") {
  const signature = randomSignature();
  const value = {
    signature,
    slot: 280_000_000,
    timestamp: Math.floor(Date.now() / 1000) - 60,
    fee: 5000,
    feePayer: from,
    type: "TRANSFER",
    transactionError: null,
    nativeTransfers: [],
    tokenTransfers: [{ fromUserAccount: from, toUserAccount: randomAddress(), mint: MINTS.USDC, tokenAmount: "@" }],
  };
  // JavaScript has no number that writes as these literals: the text is written by hand.
  return { signature, text: JSON.stringify(value).replace('"tokenAmount":"@"', `"${key}":${literal}`) };
}

const post = (items: Array<{ text: string }>) =>
  t.app.inject({
    method: "POST",
    url: "/v1/ingest/helius",
    headers: { authorization: SECRET, "content-type": "application/json" },
    payload: `[${items.map((i) => i.text).join(",")}]`,
  });

const storedAmounts = async (signatures: string[]) =>
  (await t.deps.sql`select signature, amount::text from transactions where signature in ${t.deps.sql(signatures)} order by transactions.amount`).map(
    (row) => [row.signature, row.amount],
  );

describe("POST /v1/ingest/helius with a tokenAmount number a double rounds", () => {
  it("refuses that item with the path and message a string gets, keeps it with its digits, and stores the rest", async () => {
    const rounded = item("9.99999999999999999");
    const ordinary = item("452.318912");
    // 17 significant digits that do read back from a double, as Helius writes 1B-supply tokens.
    const longExact = item("123456789.12345679");
    const escapedKey = item("9.99999999999999999", randomAddress(), "token\\u0041mount");
    const res = await post([rounded, ordinary, longExact, escapedKey]);
    expect(res.statusCode, res.body).toBe(202);
    expect(res.json()).toEqual({
      accepted: 2,
      duplicates: 0,
      skipped: 0,
      rejected: [
        { index: 0, signature: rounded.signature, errors: [{ path: "body.0.tokenTransfers.0.tokenAmount", message: MESSAGE }] },
        { index: 3, signature: escapedKey.signature, errors: [{ path: "body.3.tokenTransfers.0.tokenAmount", message: MESSAGE }] },
      ],
    });
    expect(await storedAmounts([rounded.signature, ordinary.signature, longExact.signature, escapedKey.signature])).toEqual([
      [ordinary.signature, "452.318912"],
      [longExact.signature, "123456789.12345679"],
    ]);

    const kept = await t.deps.sql`select signature, errors, item::text as item from helius_rejected_items order by errors->0->>'path'`;
    expect(kept.map((row) => [row.signature, row.errors, JSON.parse(row.item as string).tokenTransfers[0].tokenAmount])).toEqual([
      [rounded.signature, [{ path: "body.0.tokenTransfers.0.tokenAmount", message: MESSAGE }], "9.99999999999999999"],
      [escapedKey.signature, [{ path: "body.3.tokenTransfers.0.tokenAmount", message: MESSAGE }], "9.99999999999999999"],
    ]);
  });

  it("reads the literal whole when the body arrives in pieces that split it and its key", async () => {
    const rounded = item("9.99999999999999999");
    const ordinary = item("2500.75");
    const text = `[${ordinary.text},${rounded.text}]`;
    const key = text.lastIndexOf('"tokenAmount"');
    const cuts = [0, key + 6, text.lastIndexOf("9.9") + 8, text.length];
    const pieces = cuts.slice(1).map((end, i) => Buffer.from(text.slice(cuts[i], end)));
    const res = await t.app.inject({
      method: "POST",
      url: "/v1/ingest/helius",
      headers: { authorization: SECRET, "content-type": "application/json" },
      payload: Readable.from(pieces),
    });
    expect(res.statusCode, res.body).toBe(202);
    expect(res.json()).toMatchObject({ accepted: 1, rejected: [{ index: 1, signature: rounded.signature, errors: [{ path: "body.1.tokenTransfers.0.tokenAmount" }] }] });
    expect(await storedAmounts([rounded.signature, ordinary.signature])).toEqual([[ordinary.signature, "2500.75"]]);
  });

  it("does not store or fire a large_transfer at 100000000 for 99999999.999999999, which a double reads as 100000000", async () => {
    const alice = await t.token("alice");
    const wallet = await track(t, alice);
    const alertId = await createAlert(t, alice, { walletId: wallet.walletId, condition: "large_transfer", threshold: 100_000_000 });
    const below = item("99999999.999999999", wallet.address);
    const reached = item("100000000", wallet.address);
    const res = await post([below, reached]);
    expect(res.statusCode, res.body).toBe(202);
    expect(res.json()).toMatchObject({ accepted: 1, rejected: [{ index: 0, signature: below.signature }] });
    await settled(t);
    expect(await storedAmounts([below.signature, reached.signature])).toEqual([[reached.signature, "100000000"]]);
    expect((await eventsOf(t, alertId)).map((event) => [event.dedupeKey, event.observed])).toEqual([[reached.signature, 100_000_000]]);
  });
});
