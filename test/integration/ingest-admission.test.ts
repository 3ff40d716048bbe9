// Ingest admission: at most INGEST_CONCURRENCY ingest requests store at once in one API process;
// the next ones wait in a short line for a turn, and a request whose turn does not come (or that
// finds the line full) is refused before anything of it is stored: 503 problem+json
// `unavailable` saying so, with a Retry-After. Ingest used to take every request at once: under
// a flood they held the whole pool, answered in 5–9 s, and those answered 503 at REQUEST_TIMEOUT
// had been stored all the same.
import { readFileSync } from "node:fs";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Transaction } from "../../src/domain/types.ts";
import { AT_CAPACITY_DETAIL } from "../../src/http/ingest-admission.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { holdTransaction, waitForALockWait } from "../helpers/held-transaction.ts";
import { randomSignature } from "../helpers/chain.ts";
import { bearer, expectProblem, makeTransaction } from "../helpers/seed.ts";
import { waitFor } from "../helpers/wait.ts";

const HELIUS_SECRET = "helius-test-auth-header-0123456789";
/** A Helius delivery of one SOL transfer, with a signature of this test's own. */
const heliusDelivery = (signature: string) => {
  const [item] = JSON.parse(readFileSync(new URL("../fixtures/helius/sol-transfer.json", import.meta.url), "utf8")) as Array<Record<string, unknown>>;
  return [{ ...item, signature }];
};

let t: TestApp;
let token: string;
/** The test's own session, outside the app's pools: it holds the lock ingest waits on. */
let holder: postgres.Sql;

beforeAll(async () => {
  // One storing at a time, so two may wait; a deadline far beyond the 2 s wait for a turn.
  t = await startTestApp("ingest-admission", { INGEST_CONCURRENCY: "1", REQUEST_TIMEOUT: "60s", HELIUS_AUTH_HEADER: HELIUS_SECRET });
  token = await t.token("ingestor", "ingest:write");
  holder = postgres(t.config.databaseUrl, { max: 1, onnotice: () => {} });
});
afterAll(async () => {
  await holder?.end();
  await t?.close();
});

const post = (transactions: Transaction[]) =>
  t.app.inject({ method: "POST", url: "/v1/ingest/transactions", headers: bearer(token), payload: { transactions } });

async function storedOf(transactions: Transaction[]): Promise<number> {
  const signatures = transactions.map((tx) => tx.signature);
  const [row] = await t.deps.sql<{ n: number }[]>`select count(*)::int as n from transactions where signature in ${t.deps.sql(signatures)}`;
  return row!.n;
}

const refusedSoFar = () => Object.values(t.deps.ingestAdmission.refused()).reduce((sum, n) => sum + n, 0);

function expectAtCapacity(res: Awaited<ReturnType<typeof post>>): void {
  const problem = expectProblem(res, 503, "unavailable");
  expect(problem.detail).toBe(AT_CAPACITY_DETAIL);
  expect(res.headers["content-type"]).toMatch(/^application\/problem\+json/);
  expect(Number(res.headers["retry-after"])).toBeGreaterThanOrEqual(2);
  expect(Number(res.headers["retry-after"])).toBeLessThanOrEqual(5);
}

describe("ingest admission (INGEST_CONCURRENCY=1)", () => {
  it("stores requests within the cap", async () => {
    const batches = [[makeTransaction()], [makeTransaction(), makeTransaction()]];
    for (const batch of batches) expect((await post(batch)).statusCode).toBe(202);
    expect(await storedOf(batches.flat())).toBe(3);
    expect(t.deps.ingestAdmission.storing()).toBe(0);
  });

  it("refuses a request beyond the cap and its line, unstored, with 503, the detail and Retry-After; the one storing completes", async () => {
    // The one request admitted stores into a table locked by the test, so it holds its turn.
    const release = await holdTransaction(holder, (tx) => tx`lock table ingest_batches in exclusive mode`);
    const storing = [makeTransaction()];
    // As many as the line holds (INGEST_CONCURRENCY × 4).
    const lineLength = t.deps.ingestAdmission.limits.queueLength;
    const waiting = Array.from({ length: lineLength }, () => [makeTransaction()]);
    const beyondTheLine = [makeTransaction()];
    let first: Promise<Awaited<ReturnType<typeof post>>> | undefined;
    try {
      first = post(storing);
      await waitForALockWait(t.deps.sql, "the admitted request to wait on the locked table");
      expect(t.deps.ingestAdmission.storing()).toBe(1);
      const inLine = waiting.map((batch) => post(batch));
      await waitFor("the line full of requests waiting for a turn", async () => t.deps.ingestAdmission.waiting() === lineLength);

      // The line is full: refused at once.
      expectAtCapacity(await post(beyondTheLine));
      // Those in line get no turn while the first one stores: refused once their wait is over.
      for (const res of await Promise.all(inLine)) expectAtCapacity(res);
      expect(t.deps.ingestAdmission.waiting()).toBe(0);
    } finally {
      await release();
    }
    expect((await first!).statusCode).toBe(202);
    expect(await storedOf(storing)).toBe(1);
    // Nothing of the refused ones was stored.
    expect(await storedOf([...waiting.flat(), ...beyondTheLine])).toBe(0);
    expect(t.deps.ingestAdmission.refused()).toEqual({ queue_full: 1, wait_exceeded: lineLength });
    expect(t.deps.ingestAdmission.storing()).toBe(0);
    // The turn came back: the next request stores.
    expect((await post(beyondTheLine)).statusCode).toBe(202);
    expect(await storedOf(beyondTheLine)).toBe(1);
  });

  it("leaves the pool's other connections to reads: GET /v1/wallets answers while as many ingests as the pool has connections are sent", async () => {
    const release = await holdTransaction(holder, (tx) => tx`lock table ingest_batches in exclusive mode`);
    const reader = await t.token("reader", "wallets:read");
    const batches = Array.from({ length: 4 }, () => [makeTransaction()]);
    const refusedBefore = refusedSoFar();
    try {
      const ingests = batches.map((batch) => post(batch));
      await waitForALockWait(t.deps.sql, "the admitted request to wait on the locked table");
      // Without the admission all four would hold the pool's four connections, and the read would wait for the lock.
      const res = await t.app.inject({ url: "/v1/wallets", headers: bearer(reader) });
      expect(res.statusCode).toBe(200);
      // The three beyond the cap wait in line and are refused once their wait is over, while the first still stores.
      await waitFor("three ingests refused", async () => refusedSoFar() === refusedBefore + 3);
      await release();
      const statuses = (await Promise.all(ingests)).map((answer) => answer.statusCode);
      expect(statuses.filter((status) => status === 202)).toHaveLength(1);
      expect(statuses.filter((status) => status === 503)).toHaveLength(3);
      expect(await storedOf(batches.flat())).toBe(1);
    } finally {
      await release();
    }
  });

  it("refuses a Helius delivery beyond the cap the same way, unstored", async () => {
    const release = await holdTransaction(holder, (tx) => tx`lock table ingest_batches in exclusive mode`);
    const signature = randomSignature();
    const batches = Array.from({ length: 3 }, () => [makeTransaction()]);
    try {
      const first = post(batches[0]!);
      await waitForALockWait(t.deps.sql, "the admitted request to wait on the locked table");
      const inLine = batches.slice(1).map((batch) => post(batch));
      await waitFor("two requests waiting for a turn", async () => t.deps.ingestAdmission.waiting() === 2);
      const res = await t.app.inject({ method: "POST", url: "/v1/ingest/helius", headers: { authorization: HELIUS_SECRET }, payload: heliusDelivery(signature) });
      expectAtCapacity(res);
      await Promise.all(inLine);
      await release();
      expect((await first).statusCode).toBe(202);
    } finally {
      await release();
    }
    const [row] = await t.deps.sql<{ n: number }[]>`select count(*)::int as n from transactions where signature = ${signature}`;
    expect(row!.n).toBe(0);
  });
});
