// Native ingest stores amounts, fees and balances as sent, to the last digit, and judges them as
// stored. A JSON number with more significant digits than a double holds was rounded by
// JSON.parse before any check: `"amount": 9.99999999999999999` was stored as 10 (and reached a
// large_transfer threshold of 10 it never reached). Now such a literal refuses the batch whole,
// naming its path, as every other problem of a native batch does; an exact literal of 17 digits
// (what a serializer of doubles writes) is stored as sent.
//
// The bodies are written by hand: JavaScript has no number that JSON.stringify writes as
// 9.99999999999999999 (it would write 10).
import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Transaction } from "../../src/domain/types.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { MINTS, randomAddress } from "../helpers/chain.ts";
import { bearer, expectProblem, makeTransaction } from "../helpers/seed.ts";

const MESSAGE = "has more significant digits than the service keeps exactly (about 15); it would be judged as a rounded amount";

let t: TestApp;
let token: string;
beforeAll(async () => {
  t = await startTestApp("ingest-exact-numbers");
  token = await t.token("ingestor", "ingest:write");
});
afterAll(async () => {
  await t.close();
});

/** `{"transactions":[…]}` with the `field` of transaction `at` written as `literal`, exactly. */
function transactionsBody(txs: Transaction[], at: number, field: "amount" | "fee", literal: string): string {
  const items = txs.map((tx, i) => {
    const text = JSON.stringify({ ...tx, [field]: "@" });
    return i === at ? text.replace(`"${field}":"@"`, `"${field}":${literal}`) : JSON.stringify(tx);
  });
  return `{"transactions":[${items.join(",")}]}`;
}

const postTransactions = (payload: string | Readable) =>
  t.app.inject({ method: "POST", url: "/v1/ingest/transactions", headers: { ...bearer(token), "content-type": "application/json" }, payload });

const stored = async (txs: Transaction[]) =>
  (
    await t.deps.sql`select signature, amount::text, fee::text from transactions where signature in ${t.deps.sql(txs.map((tx) => tx.signature))}`
  ).map((row) => ({ signature: row.signature as string, amount: row.amount as string, fee: row.fee as string }));

const batchCount = async () => Number((await t.deps.sql`select count(*)::int as n from ingest_batches`)[0]!.n);

describe("POST /v1/ingest/transactions with a number a double rounds", () => {
  it("refuses the batch with 400 naming body.transactions.3.amount for 9.99999999999999999, and stores nothing of it", async () => {
    const txs = Array.from({ length: 5 }, () => makeTransaction({ amount: 2.5 }));
    const batchesBefore = await batchCount();
    const body = expectProblem(await postTransactions(transactionsBody(txs, 3, "amount", "9.99999999999999999")), 400, "validation_failed");
    expect(body.errors).toEqual([{ path: "body.transactions.3.amount", message: MESSAGE }]);
    expect(body.detail).toBe(`body.transactions.3.amount ${MESSAGE}`);
    expect(await stored(txs)).toEqual([]);
    expect(await batchCount()).toBe(batchesBefore);
  });

  it.each([
    ["99999999.999999999", "a double reads as 100000000"],
    ["1e-400", "below a double: read as 0, which passes minimum 0"],
    ["0.10000000000000000001", "a double reads as 0.1"],
  ])("refuses an amount of %s (%s)", async (literal) => {
    const txs = [makeTransaction(), makeTransaction()];
    const body = expectProblem(await postTransactions(transactionsBody(txs, 1, "amount", literal)), 400, "validation_failed");
    expect(body.errors).toEqual([{ path: "body.transactions.1.amount", message: MESSAGE }]);
    expect(await stored(txs)).toEqual([]);
  });

  it("stores an exact amount of 17 significant digits as sent", async () => {
    const txs = [makeTransaction(), makeTransaction()];
    const res = await postTransactions(transactionsBody(txs, 1, "amount", "123456789.12345679"));
    expect(res.statusCode, res.body).toBe(202);
    expect((await stored(txs)).find((row) => row.signature === txs[1]!.signature)?.amount).toBe("123456789.12345679");
  });

  it("refuses the batch with 400 naming body.transactions.N.fee for a fee a double rounds, and stores nothing of it", async () => {
    const txs = [makeTransaction(), makeTransaction(), makeTransaction()];
    const body = expectProblem(await postTransactions(transactionsBody(txs, 2, "fee", "0.00000500000000000000001")), 400, "validation_failed");
    expect(body.errors).toEqual([{ path: "body.transactions.2.fee", message: MESSAGE }]);
    expect(await stored(txs)).toEqual([]);
  });

  it("stores an exact fee of 17 significant digits as sent", async () => {
    const txs = [makeTransaction()];
    const res = await postTransactions(transactionsBody(txs, 0, "fee", "0.30000000000000004"));
    expect(res.statusCode, res.body).toBe(202);
    expect(await stored(txs)).toEqual([{ signature: txs[0]!.signature, amount: "1.5", fee: "0.30000000000000004" }]);
  });

  it("names every such number of the batch, amounts and fees, in the order sent", async () => {
    const txs = [makeTransaction(), makeTransaction(), makeTransaction()];
    const text = transactionsBody(txs, 0, "fee", "9.99999999999999999").replace(
      `"amount":1.5,"token":"SOL","from":"${txs[2]!.from}"`,
      `"amount":99999999.999999999,"token":"SOL","from":"${txs[2]!.from}"`,
    );
    const body = expectProblem(await postTransactions(text), 400, "validation_failed");
    expect(body.errors).toEqual([
      { path: "body.transactions.0.fee", message: MESSAGE },
      { path: "body.transactions.2.amount", message: MESSAGE },
    ]);
    expect(await stored(txs)).toEqual([]);
  });

  it("reads the literal whole when the body arrives in pieces that split it and its key", async () => {
    const txs = [makeTransaction(), makeTransaction()];
    const text = transactionsBody(txs, 1, "amount", "9.99999999999999999");
    const key = text.lastIndexOf('"amount"');
    const cuts = [0, key + 4, text.lastIndexOf("9.9") + 8, text.length];
    const pieces = cuts.slice(1).map((end, i) => Buffer.from(text.slice(cuts[i], end)));
    const body = expectProblem(await postTransactions(Readable.from(pieces)), 400, "validation_failed");
    expect(body.errors).toEqual([{ path: "body.transactions.1.amount", message: MESSAGE }]);
    expect(await stored(txs)).toEqual([]);
  });
});

describe("POST /v1/ingest/accounts with a number a double rounds", () => {
  const account = (address: string) => ({
    address,
    balance: 3.25,
    tokenAccounts: [
      { mint: MINTS.USDC, symbol: "USDC", balance: 10, usdValue: 10 },
      { mint: MINTS.BONK, symbol: "BONK", balance: 5, usdValue: 0.01 },
    ],
    nfts: [{ mint: randomAddress(), name: "Claynosaurz #7", collection: "Claynosaurz", floorPrice: 310.5 }],
  });

  const postAccounts = (payload: string) =>
    t.app.inject({ method: "POST", url: "/v1/ingest/accounts", headers: { ...bearer(token), "content-type": "application/json" }, payload });

  const balances = async (addresses: string[]) =>
    (await t.deps.sql`select address, balance::text from address_state where address in ${t.deps.sql(addresses)}`).map((row) => [
      row.address,
      row.balance,
    ]);

  it.each([
    ['"balance":3.25', '"balance":99999999.999999999', "body.accounts.1.balance"],
    ['"balance":5,"usdValue":0.01', '"balance":5,"usdValue":0.010000000000000000001', "body.accounts.1.tokenAccounts.1.usdValue"],
    ['"balance":10,"usdValue":10', '"balance":9.99999999999999999,"usdValue":10', "body.accounts.1.tokenAccounts.0.balance"],
    ['"floorPrice":310.5', '"floorPrice":310.50000000000000001', "body.accounts.1.nfts.0.floorPrice"],
  ])("refuses the batch with 400 naming the path when %s is sent as %s, and stores nothing of it", async (plain, rounded, path) => {
    const addresses = [randomAddress(), randomAddress()];
    const [first, second] = addresses.map((address) => JSON.stringify(account(address)));
    const res = await postAccounts(`{"accounts":[${first},${second!.replace(plain, rounded)}]}`);
    const body = expectProblem(res, 400, "validation_failed");
    expect(body.errors).toEqual([{ path, message: MESSAGE }]);
    expect(await balances(addresses)).toEqual([]);
  });

  it("stores an exact balance of 17 significant digits as sent", async () => {
    const address = randomAddress();
    const res = await postAccounts(`{"accounts":[${JSON.stringify(account(address)).replace('"balance":3.25', '"balance":123456789.12345679')}]}`);
    expect(res.statusCode, res.body).toBe(202);
    expect(await balances([address])).toEqual([[address, "123456789.12345679"]]);
  });
});
