// Helius lamports are stored as SOL to the last digit, or their item is refused on its own, as
// an inexact tokenAmount's is. Before, 9000000000000001 lamports were stored as
// 9000000.000000002 SOL (a double's division) and fired a large_transfer at 9000000.000000002
// that the transfer never reached; 10000000000000001 (read as 10000000000000000 by JSON.parse)
// was stored as 10000000.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningWorkers } from "../../src/queue/run-workers.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { randomAddress, randomSignature } from "../helpers/chain.ts";
import { createAlert, eventsOf, settled, startWorkers, track } from "../helpers/pipeline.ts";

const SECRET = "helius-exact-lamports-auth-header-0123";
const LITERAL_MESSAGE = "has more significant digits than the service keeps exactly (about 15); it would be judged as a rounded amount";
const solMessage = (sol: string) =>
  `is ${sol} SOL, which has more significant digits than the service keeps exactly (about 15); it would be judged as a rounded amount`;

let t: TestApp;
let workers: RunningWorkers;
beforeAll(async () => {
  t = await startTestApp("helius-exact-lamports", { HELIUS_AUTH_HEADER: SECRET });
  workers = startWorkers(t);
});
afterAll(async () => {
  await workers.close();
  await t.close();
});

/** A SOL transfer item from `from`, its lamports and fee written as these literals exactly. */
function item(lamports: string, from = randomAddress(), fee = "5000") {
  const signature = randomSignature();
  const value = {
    signature,
    slot: 280_000_000,
    timestamp: Math.floor(Date.now() / 1000) - 60,
    fee: "@fee",
    feePayer: from,
    type: "TRANSFER",
    transactionError: null,
    nativeTransfers: [{ fromUserAccount: from, toUserAccount: randomAddress(), amount: "@amount" }],
    tokenTransfers: [],
  };
  // JavaScript has no number that writes as 10000000000000001: the text is written by hand.
  const text = JSON.stringify(value).replace('"@fee"', fee).replace('"@amount"', lamports);
  return { signature, text };
}

const post = (items: Array<{ text: string }>) =>
  t.app.inject({
    method: "POST",
    url: "/v1/ingest/helius",
    headers: { authorization: SECRET, "content-type": "application/json" },
    payload: `[${items.map((i) => i.text).join(",")}]`,
  });

const storedAmounts = async (signatures: string[]) =>
  (
    await t.deps.sql`select signature, amount::text, fee::text from transactions where signature in ${t.deps.sql(signatures)} order by transactions.amount`
  ).map((row) => [row.signature, row.amount, row.fee]);

describe("POST /v1/ingest/helius with lamports a double rounds", () => {
  it("refuses those items only, with the path and why, keeps them with their digits, and stores the rest to the last digit", async () => {
    const solRounded = item("9000000000000001");
    const literalRounded = item("10000000000000001");
    const feeRounded = item("1500000000", randomAddress(), "9007199254740993");
    const belowTwoTo23 = item("8388607999999999");
    const whale = item("25000000000000000");
    const res = await post([solRounded, literalRounded, feeRounded, belowTwoTo23, whale]);
    expect(res.statusCode, res.body).toBe(202);
    expect(res.json()).toEqual({
      accepted: 2,
      duplicates: 0,
      skipped: 0,
      rejected: [
        { index: 0, signature: solRounded.signature, errors: [{ path: "body.0.nativeTransfers.0.amount", message: solMessage("9000000.000000001") }] },
        { index: 1, signature: literalRounded.signature, errors: [{ path: "body.1.nativeTransfers.0.amount", message: LITERAL_MESSAGE }] },
        { index: 2, signature: feeRounded.signature, errors: [{ path: "body.2.fee", message: LITERAL_MESSAGE }] },
      ],
    });
    expect(await storedAmounts([solRounded.signature, literalRounded.signature, feeRounded.signature, belowTwoTo23.signature, whale.signature])).toEqual([
      [belowTwoTo23.signature, "8388607.999999999", "0.000005"],
      [whale.signature, "25000000", "0.000005"],
    ]);

    // As text: a number read back through a double would hide a lost digit.
    const kept = await t.deps.sql`
      select signature, item->'fee' #>> '{}' as fee, json_typeof(item->'fee') as "feeType",
             item->'nativeTransfers'->0->'amount' #>> '{}' as amount, json_typeof(item->'nativeTransfers'->0->'amount') as "amountType"
      from helius_rejected_items order by errors->0->>'path'`;
    expect(kept.map((row) => [row.signature, `${row.fee} (${row.feeType})`, `${row.amount} (${row.amountType})`])).toEqual([
      [solRounded.signature, "5000 (number)", "9000000000000001 (number)"],
      [literalRounded.signature, "5000 (number)", "10000000000000001 (string)"],
      [feeRounded.signature, "9007199254740993 (string)", "1500000000 (number)"],
    ]);
  });

  it("does not store or fire a large_transfer at 9000000.000000002 for 9000000000000001 lamports, one lamport below it", async () => {
    const alice = await t.token("alice");
    const wallet = await track(t, alice);
    const alertId = await createAlert(t, alice, { walletId: wallet.walletId, condition: "large_transfer", threshold: 9000000.000000002 });
    const below = item("9000000000000001", wallet.address);
    const reached = item("9000000000000002", wallet.address);
    const res = await post([below, reached]);
    expect(res.statusCode, res.body).toBe(202);
    expect(res.json()).toMatchObject({ accepted: 1, rejected: [{ index: 0, signature: below.signature }] });
    await settled(t);
    expect(await storedAmounts([below.signature, reached.signature])).toEqual([[reached.signature, "9000000.000000002", "0.000005"]]);
    expect((await eventsOf(t, alertId)).map((event) => event.dedupeKey)).toEqual([reached.signature]);
  });
});
