// The simulator's feed on a clock the test moves: how many transactions each request carries
// (README, The synthetic feed), and what a 401 does to the run.
import { describe, expect, it } from "vitest";
import type { Transaction } from "../../src/domain/types.ts";
import { ApiError } from "../../src/sim/client.ts";
import { runFeed, type FeedOptions } from "../../src/sim/run.ts";
import { fixedToken, mintedTokens, type TokenSource } from "../../src/sim/tokens.ts";

type Request = { atMs: number; size: number };

/** runFeed against a client that answers at once, on a clock that moves only when the feed waits. */
async function feed(options: { rate: number; batchSize: number; durationMs: number; post?: (batch: readonly Transaction[]) => Promise<void>; tokens?: TokenSource }) {
  let clock = 0;
  const requests: Request[] = [];
  const lines: string[] = [];
  const run = runFeed({
    client: {
      postTransactions: async (batch) => {
        requests.push({ atMs: clock, size: batch.length });
        await options.post?.(batch);
        return { accepted: batch.length, duplicates: 0 };
      },
    },
    generator: { next: (count) => Array.from({ length: count }, () => ({}) as Transaction) },
    rate: options.rate,
    batchSize: options.batchSize,
    durationMs: options.durationMs,
    signal: new AbortController().signal,
    report: (line) => lines.push(line),
    now: () => clock,
    sleep: async (ms) => {
      clock += ms;
    },
    ...(options.tokens ? { tokens: options.tokens } : {}),
  } satisfies FeedOptions);
  return { run, requests, lines };
}

describe("the feed's batches", () => {
  it("sends full batches of --batch, at the rate asked for", async () => {
    const { run, requests } = await feed({ rate: 100, batchSize: 50, durationMs: 10_000 });
    const stats = await run;
    expect(requests.map((r) => r.size)).toEqual(Array<number>(20).fill(50));
    expect(stats.sent).toBe(1000);
    // One every half second: the 50th transaction is due at 500 ms, the 100th at 1,000 ms.
    expect(requests.slice(0, 3).map((r) => r.atMs)).toEqual([500, 1000, 1500]);
  });

  it("keeps to the default half second's worth at a high rate", async () => {
    const { run, requests } = await feed({ rate: 500, batchSize: 250, durationMs: 4_000 });
    expect((await run).sent).toBe(2000);
    expect(requests.map((r) => r.size)).toEqual(Array<number>(8).fill(250));
  });

  it("sends a batch the rate cannot fill soon once its oldest transaction has waited a second", async () => {
    const { run, requests } = await feed({ rate: 5, batchSize: 50, durationMs: 10_000 });
    expect((await run).sent).toBe(50);
    // The first is due at 200 ms and goes at 1,200 ms with the 5 due after it; and so on.
    // At 10 s, the end of --duration, the 2 due since 9.6 s go too.
    expect(requests).toEqual([...Array.from({ length: 8 }, (_, i) => ({ atMs: 1200 * (i + 1), size: 6 })), { atMs: 10_000, size: 2 }]);
  });

  it("sends the part-full batch left at the end of --duration", async () => {
    const { run, requests } = await feed({ rate: 100, batchSize: 40, durationMs: 1_000 });
    expect((await run).sent).toBe(100);
    expect(requests.map((r) => r.size)).toEqual([40, 40, 20]);
  });
});

describe("a 401 during the feed", () => {
  it("mints a new token and sends the batch again when the simulator mints its own", async () => {
    let minted = 0;
    const tokens = mintedTokens(async () => `token-${++minted}`, 60_000);
    // The API takes the first token for four requests, then refuses it (as JWT_MAX_TOKEN_AGE would).
    let takenWithFirst = 0;
    const { run } = await feed({
      rate: 10,
      batchSize: 5,
      durationMs: 5_000,
      tokens,
      post: async () => {
        if ((await tokens.current()) === "token-1" && ++takenWithFirst > 4) {
          throw new ApiError(401, "POST /v1/ingest/transactions answered 401: the token was issued more than 60 s ago");
        }
      },
    });
    expect(await run).toMatchObject({ sent: 50, accepted: 50, errors: 0 });
    expect(minted).toBe(2);
  });

  it("stops the run when a token the user gave is refused", async () => {
    const { run, lines } = await feed({
      rate: 10,
      batchSize: 5,
      durationMs: 60_000,
      tokens: fixedToken("given"),
      post: () => Promise.reject(new ApiError(401, "POST /v1/ingest/transactions answered 401: the token has expired")),
    });
    await expect(run).rejects.toThrow("the token has expired");
    expect(lines).toContain("error: POST /v1/ingest/transactions answered 401: the token has expired");
  });

  it("stops the run when a new token is refused too", async () => {
    let minted = 0;
    const tokens = mintedTokens(async () => `token-${++minted}`, 60_000);
    const { run } = await feed({
      rate: 10,
      batchSize: 5,
      durationMs: 60_000,
      tokens,
      post: () => Promise.reject(new ApiError(401, "POST /v1/ingest/transactions answered 401: the token's audience is wrong")),
    });
    await expect(run).rejects.toThrow("audience");
    expect(minted).toBe(2);
  });
});
