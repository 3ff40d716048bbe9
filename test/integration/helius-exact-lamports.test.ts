// Helius lamports of any size reach the alerts: a whale transfer past 2^23 SOL (whose SOL value
// a double holds within a lamport or two) is stored and judged, not refused. Refusing it, as
// for a day's code, dropped the largest transfers before any alert saw them.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningWorkers } from "../../src/queue/run-workers.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { randomAddress, randomSignature } from "../helpers/chain.ts";
import { createAlert, eventsOf, settled, startWorkers, track } from "../helpers/pipeline.ts";

const SECRET = "helius-exact-lamports-auth-header-0123";

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

/** A SOL transfer item from `from`, its lamports written as this literal exactly. */
function item(lamports: string, from = randomAddress()) {
  const signature = randomSignature();
  const value = {
    signature,
    slot: 280_000_000,
    timestamp: Math.floor(Date.now() / 1000) - 60,
    fee: 5000,
    feePayer: from,
    type: "TRANSFER",
    transactionError: null,
    nativeTransfers: [{ fromUserAccount: from, toUserAccount: randomAddress(), amount: "@amount" }],
    tokenTransfers: [],
  };
  // JavaScript has no number that writes as 10000000000000001: the text is written by hand.
  return { signature, text: JSON.stringify(value).replace('"@amount"', lamports) };
}

describe("POST /v1/ingest/helius with whale transfers", () => {
  it("stores them and fires large_transfer for them, past 2^23 SOL and past 2^53 lamports alike", async () => {
    const alice = await t.token("alice");
    const wallet = await track(t, alice);
    const alertId = await createAlert(t, alice, { walletId: wallet.walletId, condition: "large_transfer", threshold: 1_000_000 });
    const items = [item("9000000000000001", wallet.address), item("10000000000000001", wallet.address), item("25000000000000000", wallet.address)];
    const res = await t.app.inject({
      method: "POST",
      url: "/v1/ingest/helius",
      headers: { authorization: SECRET, "content-type": "application/json" },
      payload: `[${items.map((i) => i.text).join(",")}]`,
    });
    expect(res.statusCode, res.body).toBe(202);
    expect(res.json()).toMatchObject({ accepted: 3, duplicates: 0, skipped: 0 });
    await settled(t);
    const stored = await t.deps.sql<{ amount: string }[]>`
      select amount::text from transactions where signature in ${t.deps.sql(items.map((i) => i.signature))} order by transactions.amount`;
    // Within a lamport or two of what was sent.
    expect(stored.map((row) => Math.round(Number(row.amount)))).toEqual([9_000_000, 10_000_000, 25_000_000]);
    expect((await eventsOf(t, alertId)).map((event) => event.dedupeKey).sort()).toEqual(items.map((i) => i.signature).sort());
  });
});
