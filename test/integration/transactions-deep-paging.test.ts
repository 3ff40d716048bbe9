// offset stops at 100,000 (DESIGN.md section 3) while hasMore can still be true there. The
// 400 for a deeper offset says the way on: endTime at the last blockTime received, and offset
// the number of received entries with that blockTime. That way must read every entry once,
// also where a page ends among entries that share a blockTime.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Transaction } from "../../src/domain/types.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { randomAddress } from "../helpers/chain.ts";
import { bearer, expectProblem, ingestTransactions, makeTransaction, trackWallet, type WalletBody } from "../helpers/seed.ts";

let t: TestApp;
let alice: string;
let wallet: WalletBody;

const T0 = 1_712_000_000;
const ENTRIES = 41;

beforeAll(async () => {
  t = await startTestApp("transactions-deep-paging");
  alice = await t.token("alice");
  wallet = await trackWallet(t, alice);
  // Entries in runs of up to five per blockTime (some sharing a slot too), so that pages of
  // seven end inside a run.
  const txs: Transaction[] = Array.from({ length: ENTRIES }, (_, i) =>
    makeTransaction({ to: wallet.address, from: randomAddress(), blockTime: T0 + Math.floor(i / 5) * 60, slot: 1000 + Math.floor(i / 2) }),
  );
  await ingestTransactions(t, await t.token("ingestor", "ingest:write"), txs);
});
afterAll(async () => {
  await t.close();
});

type Page = { transactions: { signature: string; blockTime: number }[]; total: number; hasMore: boolean };

async function page(query: string): Promise<Page> {
  const res = await t.app.inject({ url: `/v1/transactions?walletId=${wallet.walletId}&${query}`, headers: bearer(alice) });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

describe("paging past the offset bound", () => {
  it("refuses an offset over 100000 with a 400 that says how to read further", async () => {
    const res = await t.app.inject({ url: `/v1/transactions?walletId=${wallet.walletId}&offset=100001`, headers: bearer(alice) });
    const problem = expectProblem(res, 400, "validation_failed");
    expect(problem.errors).toEqual([
      {
        path: "query.offset",
        message: expect.stringMatching(
          /^must be a whole number from 0 to 100000; to read further, set endTime to the blockTime of the last transaction received and offset to how many of the transactions received have that blockTime/,
        ),
      },
    ]);
  });

  it.each(["1.5", "-1"])("gives no such advice for offset=%s, which is not a whole number", async (offset) => {
    const res = await t.app.inject({ url: `/v1/transactions?walletId=${wallet.walletId}&offset=${offset}`, headers: bearer(alice) });
    const [error] = expectProblem(res, 400, "validation_failed").errors ?? [];
    expect(error?.path).toBe("query.offset");
    expect(error?.message).not.toContain("endTime");
  });

  it("reads every entry once, in order, by the way the 400 names, pages ending inside runs of one blockTime", async () => {
    const all = (await page("limit=500")).transactions.map((tx) => tx.signature);
    expect(all).toHaveLength(ENTRIES);

    const read: Page["transactions"] = [];
    let query = "limit=7";
    for (let pages = 0; pages < ENTRIES; pages++) {
      const { transactions, hasMore } = await page(query);
      read.push(...transactions);
      if (!hasMore) break;
      const last = read.at(-1)!.blockTime;
      query = `limit=7&endTime=${last}&offset=${read.filter((tx) => tx.blockTime === last).length}`;
    }
    expect(read.map((tx) => tx.signature)).toEqual(all);
  });
});
