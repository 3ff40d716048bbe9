import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Transaction } from "../../src/domain/types.ts";
import { buildApp } from "../../src/http/app.ts";
import { closeQueues, createQueues } from "../../src/queue/producers.ts";
import { createCommandRedis } from "../../src/redis.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { randomBytes } from "node:crypto";
import { base58Encode } from "../../src/domain/base58.ts";
import { randomAddress } from "../helpers/chain.ts";
import { bearer, errorPaths, expectProblem, ingestTransactions, makeTransaction, trackWallet } from "../helpers/seed.ts";

let t: TestApp;
let token: string;
beforeAll(async () => {
  t = await startTestApp("ingest-transactions");
  token = await t.token("ingestor", "ingest:write");
});
afterAll(async () => {
  await t.close();
});

const post = (payload: unknown, headers: Record<string, string> = bearer(token)) =>
  t.app.inject({ method: "POST", url: "/v1/ingest/transactions", headers, payload: payload as object });

async function batchesOf(signature: string): Promise<string[]> {
  const rows = await t.deps.sql<{ batch_id: string }[]>`select batch_id from transactions where signature = ${signature}`;
  return rows.map((row) => row.batch_id);
}

async function queuedJobCount(): Promise<number> {
  const counts = await t.deps.queues.transactions.getJobCounts();
  return Object.values(counts).reduce((sum, n) => sum + n, 0);
}

describe("POST /v1/ingest/transactions", () => {
  it("stores a new batch, records it, and enqueues one evaluate job keyed by the batch id", async () => {
    const before = await queuedJobCount();
    const txs = [makeTransaction({ mint: null }), makeTransaction({ type: "swap", token: "USDC", amount: 250.25 })];
    const res = await post({ transactions: txs });
    expect(res.statusCode).toBe(202);
    expect(res.json()).toEqual({ accepted: 2, duplicates: 0 });

    const [batchId] = await batchesOf(txs[0]!.signature);
    expect(batchId).toMatch(/^bat_/);
    expect(await batchesOf(txs[1]!.signature)).toEqual([batchId]);
    const [batch] = await t.deps.sql`select transaction_count, evaluated_at from ingest_batches where id = ${batchId!}`;
    expect(batch).toEqual({ transaction_count: 2, evaluated_at: null });

    const job = await t.deps.queues.transactions.getJob(batchId!);
    expect(job?.name).toBe("evaluate");
    expect(job?.data).toEqual({ batchId });
    expect(await queuedJobCount()).toBe(before + 1);
  });

  it("stores every field of a transaction as given", async () => {
    const tx = makeTransaction({ type: "nft", amount: 0.123456789, token: "BONK", mint: randomAddress(), fee: 0.00001, status: "failed", slot: 9_007_199_254, blockTime: 1_700_000_123 });
    await ingestTransactions(t, token, [tx]);
    const [row] = await t.deps.sql`
      select type, amount::text, token, mint, from_address, to_address, block_time::text, slot::text, fee::text, status
      from transactions where signature = ${tx.signature}`;
    expect(row).toEqual({
      type: "nft",
      amount: "0.123456789",
      token: "BONK",
      mint: tx.mint,
      from_address: tx.from,
      to_address: tx.to,
      block_time: "1700000123",
      slot: "9007199254",
      fee: "0.00001", // as sent: unconstrained numeric keeps no trailing zeros of its own
      status: "failed",
    });
  });

  it("answers a repeated batch with accepted 0 and leaves exactly one job for the batch", async () => {
    const txs = [makeTransaction(), makeTransaction(), makeTransaction()];
    expect(await ingestTransactions(t, token, txs)).toEqual({ accepted: 3, duplicates: 0 });
    const [batchId] = await batchesOf(txs[0]!.signature);
    const jobsAfterFirst = await queuedJobCount();

    expect(await ingestTransactions(t, token, txs)).toEqual({ accepted: 0, duplicates: 3 });
    expect(await batchesOf(txs[2]!.signature)).toEqual([batchId]);
    expect((await t.deps.queues.transactions.getJob(batchId!))?.data).toEqual({ batchId });
    expect(await queuedJobCount()).toBe(jobsAfterFirst);
    const batches = await t.deps.sql`select id from ingest_batches where id = ${batchId!}`;
    expect(batches).toHaveLength(1);
  });

  it("stores a signature repeated within one request once, keeping the first, and counts the repeat as a duplicate", async () => {
    const first = makeTransaction({ amount: 1 });
    const repeat = { ...first, amount: 2 };
    expect(await ingestTransactions(t, token, [first, repeat, makeTransaction()])).toEqual({ accepted: 2, duplicates: 1 });
    const rows = await t.deps.sql`select amount::float8 as amount from transactions where signature = ${first.signature}`;
    expect(rows).toEqual([{ amount: 1 }]);
  });

  it("stores only the new part of a partly known batch, as a new batch", async () => {
    const known = makeTransaction();
    await ingestTransactions(t, token, [known]);
    const fresh = makeTransaction();
    expect(await ingestTransactions(t, token, [known, fresh])).toEqual({ accepted: 1, duplicates: 1 });
    const [knownBatch] = await batchesOf(known.signature);
    const [freshBatch] = await batchesOf(fresh.signature);
    expect(freshBatch).not.toBe(knownBatch);
    expect(await t.deps.queues.transactions.getJob(freshBatch!)).toBeDefined();
  });

  it("moves last_activity of both (tracked) sides forward to the newest blockTime, never back", async () => {
    const owner = await t.token("alice");
    const { address: a } = await trackWallet(t, owner);
    const { address: b } = await trackWallet(t, owner);
    await ingestTransactions(t, token, [
      makeTransaction({ from: a, to: b, blockTime: 1_700_000_100 }),
      makeTransaction({ from: b, to: a, blockTime: 1_700_000_200 }),
    ]);
    await ingestTransactions(t, token, [makeTransaction({ from: a, to: b, blockTime: 1_600_000_000 })]);
    const rows = await t.deps.sql`
      select address, last_activity::float8 as last from address_activity where address in (${a}, ${b}) order by last_activity`;
    expect(rows.map((row) => row.last)).toEqual([1_700_000_200, 1_700_000_200]);
  });

  it("accepts a batch of exactly 1000 and refuses 1001 with 400 naming body.transactions", async () => {
    const thousand = Array.from({ length: 1000 }, () => makeTransaction());
    expect(await ingestTransactions(t, token, thousand)).toEqual({ accepted: 1000, duplicates: 0 });
    const body = expectProblem(await post({ transactions: [...thousand, makeTransaction()] }), 400, "validation_failed");
    expect(errorPaths(body)).toContain("body.transactions");
  });

  it("accepts a body over 1 MiB (the ingest limit is 10 MiB) and refuses one over 10 MiB with 413", async () => {
    const json = JSON.stringify({ transactions: [makeTransaction()] });
    const padded = `${json.slice(0, -1)}${" ".repeat(2 * 1024 * 1024)}}`;
    const ok = await post(padded, { ...bearer(token), "content-type": "application/json" });
    expect(ok.statusCode).toBe(202);
    const huge = `${json.slice(0, -1)}${" ".repeat(10 * 1024 * 1024)}}`;
    expectProblem(await post(huge, { ...bearer(token), "content-type": "application/json" }), 413, "payload_too_large");
  });

  const invalidItems: [string, string, (tx: Transaction) => unknown][] = [
    ["a signature with a character outside base58", "body.transactions.0.signature", (tx) => ({ ...tx, signature: `0${tx.signature.slice(1)}` })],
    ["a signature that decodes to fewer than 64 bytes", "body.transactions.0.signature", (tx) => ({ ...tx, signature: base58Encode(randomBytes(63)) })],
    ["a from address that decodes to fewer than 32 bytes", "body.transactions.0.from", (tx) => ({ ...tx, from: base58Encode(randomBytes(31)) })],
    ["a to address that is not base58", "body.transactions.0.to", (tx) => ({ ...tx, to: "not an address" })],
    ["a mint that is not an address", "body.transactions.0.mint", (tx) => ({ ...tx, mint: "USDC" })],
    ["an unknown type", "body.transactions.0.type", (tx) => ({ ...tx, type: "mint" })],
    ["an unknown status", "body.transactions.0.status", (tx) => ({ ...tx, status: "pending" })],
    ["an amount sent as a string", "body.transactions.0.amount", (tx) => ({ ...tx, amount: "1" })],
    ["a negative amount", "body.transactions.0.amount", (tx) => ({ ...tx, amount: -1 })],
    ["an amount beyond 1e28", "body.transactions.0.amount", (tx) => ({ ...tx, amount: 1e30 })],
    ["a negative fee", "body.transactions.0.fee", (tx) => ({ ...tx, fee: -0.1 })],
    ["a fractional blockTime", "body.transactions.0.blockTime", (tx) => ({ ...tx, blockTime: 1.5 })],
    ["a negative slot", "body.transactions.0.slot", (tx) => ({ ...tx, slot: -1 })],
    ["an empty token", "body.transactions.0.token", (tx) => ({ ...tx, token: "" })],
    ["a token of spaces only", "body.transactions.0.token", (tx) => ({ ...tx, token: "   " })],
    ["a token that is a mint beside a mint of another", "body.transactions.0.mint", (tx) => ({ ...tx, token: randomAddress(), mint: randomAddress() })],
    ["a token over 64 characters", "body.transactions.0.token", (tx) => ({ ...tx, token: "x".repeat(65) })],
    ["an unknown field", "body.transactions.0.memo", (tx) => ({ ...tx, memo: "hi" })],
    ["a missing required field", "body.transactions.0.status", ({ status: _status, ...rest }) => rest],
  ];
  it.each(invalidItems)("refuses %s with 400 naming %s, storing nothing", async (_what, path, mutate) => {
    const good = makeTransaction();
    const res = await post({ transactions: [mutate(makeTransaction({ signature: good.signature })), makeTransaction()] });
    const body = expectProblem(res, 400, "validation_failed");
    expect(errorPaths(body)).toContain(path);
    expect(await batchesOf(good.signature)).toEqual([]);
  });

  it("names the index of the offending item", async () => {
    const bad = { ...makeTransaction(), to: base58Encode(randomBytes(33)) };
    const body = expectProblem(await post({ transactions: [makeTransaction(), bad] }), 400, "validation_failed");
    expect(errorPaths(body)).toEqual(["body.transactions.1.to"]);
  });

  it("refuses a block time before Solana's first block or more than 10 minutes ahead of the clock, naming it, and stores nothing of the batch", async () => {
    const nowSeconds = Math.floor(Date.now() / 1000);
    for (const blockTime of [0, 1_584_316_799, nowSeconds + 2 * 86_400]) {
      const good = makeTransaction();
      const body = expectProblem(await post({ transactions: [good, { ...makeTransaction(), blockTime }] }), 400, "validation_failed");
      expect(errorPaths(body)).toEqual(["body.transactions.1.blockTime"]);
      expect(await batchesOf(good.signature)).toEqual([]);
    }
    // An hour over 2 days: exactly 2 days read "47 hours ahead" whenever a second turned before the server read its clock.
    const body = expectProblem(await post({ transactions: [{ ...makeTransaction(), blockTime: nowSeconds + 2 * 86_400 + 3600 }] }), 400, "validation_failed");
    expect(body.errors?.[0]?.message).toMatch(/^is 2 days ahead of this server's clock/);
    const inTime = { ...makeTransaction(), blockTime: nowSeconds + 60 };
    expect((await post({ transactions: [inTime] })).json()).toEqual({ accepted: 1, duplicates: 0 });
  });

  it("refuses a token with spaces around it, a control character, or one that reads as a well-known symbol and is not it, naming it, and stores nothing of the batch", async () => {
    const spaced = "must not begin or end with a space (give the symbol, or the mint, as it is)";
    const disguised = (hidden: string) => `reads as the well-known symbol USDC but is another name (it holds ${hidden}): give USDC as it is, or the mint`;
    for (const [token, message] of [
      [" USDC", spaced],
      ["USDC ", spaced],
      ["USDC\u00a0", spaced],
      ["PO\u0007PCAT", "holds a control character (U+0007): give the symbol, or the mint, as it is"],
      ["USDC\u200b", disguised("U+200B")],
      ["US\u00adDC", disguised("U+00AD")],
      ["USDC\ufe0f", disguised("U+FE0F")],
      ["USDC\u034f", disguised("U+034F")],
      ["USDC\u3164", disguised("U+3164")],
      ["USDC\u2800", disguised("U+2800")],
      ["\uff35\uff33\uff24\uff23", "reads as the well-known symbol USDC but is another name (it is written in other characters): give USDC as it is, or the mint"],
      ["usd\u200bc", "reads as the well-known symbol usdc but is another name (it holds U+200B): give usdc as it is, or the mint"],
    ]) {
      const good = makeTransaction();
      const body = expectProblem(await post({ transactions: [good, { ...makeTransaction(), token }] }), 400, "validation_failed");
      expect(body.errors).toEqual([{ path: "body.transactions.1.token", message }]);
      expect(await batchesOf(good.signature)).toEqual([]);
    }
    // What a symbol may hold: a space inside a name, an emoji joined by U+200D with its variation selector.
    const kept = [makeTransaction({ token: "Wrapped SOL" }), makeTransaction({ token: "\u2764\ufe0f\u200d\ud83d\udd25" })];
    expect((await post({ transactions: kept })).json()).toEqual({ accepted: 2, duplicates: 0 });
  });

  it("refuses an empty batch, a missing transactions field and an unknown top-level field", async () => {
    expect(errorPaths(expectProblem(await post({ transactions: [] }), 400, "validation_failed"))).toContain("body.transactions");
    expect(errorPaths(expectProblem(await post({}), 400, "validation_failed"))).toContain("body.transactions");
    const extra = expectProblem(await post({ transactions: [makeTransaction()], source: "x" }), 400, "validation_failed");
    expect(errorPaths(extra)).toContain("body.source");
  });

  it("refuses a non-JSON content type with 415", async () => {
    const res = await post("transactions", { ...bearer(token), "content-type": "text/plain" });
    expectProblem(res, 415, "unsupported_media_type");
  });

  it("needs a token (401) with the ingest:write scope (403)", async () => {
    expectProblem(await post({ transactions: [makeTransaction()] }, {}), 401, "unauthorized");
    const reader = await t.token("reader", "wallets:read transactions:read");
    expectProblem(await post({ transactions: [makeTransaction()] }, bearer(reader)), 403, "forbidden");
  });

  it("keeps the rows and answers 503 when Redis cannot take the job; a retry stores nothing twice", async () => {
    // A real connection to a port where nothing listens: the enqueue fails as it would with Redis down.
    const deadRedis = createCommandRedis("redis://127.0.0.1:1", { retryStrategy: () => null });
    deadRedis.on("error", () => {});
    const deadQueues = createQueues(deadRedis, t.config.queuePrefix);
    for (const queue of Object.values(deadQueues)) queue.on("error", () => {});
    const app = await buildApp({ ...t.deps, queues: deadQueues });
    try {
      const tx = makeTransaction();
      const inject = () =>
        app.inject({ method: "POST", url: "/v1/ingest/transactions", headers: bearer(token), payload: { transactions: [tx] } });
      const res = await inject();
      expectProblem(res, 503, "unavailable");
      expect(res.headers["retry-after"]).toBeDefined();

      const [batchId] = await batchesOf(tx.signature);
      expect(batchId).toMatch(/^bat_/);
      const [batch] = await t.deps.sql`select evaluated_at from ingest_batches where id = ${batchId!}`;
      expect(batch).toEqual({ evaluated_at: null });
      expect(await t.deps.queues.transactions.getJob(batchId!)).toBeUndefined();

      expect(await ingestTransactions(t, token, [tx])).toEqual({ accepted: 0, duplicates: 1 });
    } finally {
      await app.close();
      await closeQueues(deadQueues).catch(() => {});
      deadRedis.disconnect();
    }
  });
});
