import { Compile } from "typebox/compile";
import { describe, expect, it } from "vitest";
import { isAddress, isSignature } from "../../src/domain/base58.ts";
import type { Transaction } from "../../src/domain/types.ts";
import { WELL_KNOWN_TOKENS } from "../../src/domain/tokens.ts";
import { AccountSnapshotSchema, IngestTransactionSchema } from "../../src/ingest/native.ts";
import { retryDelayMs } from "../../src/sim/client.ts";
import { createPopulation, createSnapshots } from "../../src/sim/population.ts";
import { createRandom } from "../../src/sim/random.ts";
import { defaultBatchSize } from "../../src/sim/run.ts";
import { createTrafficGenerator } from "../../src/sim/traffic.ts";

const START = Date.UTC(2025, 5, 1, 12, 0, 0);

/** A clock the test moves by hand. */
function manualClock(startMs = START) {
  let ms = startMs;
  return { now: () => new Date(ms), advance: (by: number) => (ms += by), set: (to: number) => (ms = to) };
}

/** `seconds` batches of `perSecond` transactions, one second apart. */
function generate(options: { seed?: number; stream?: number; wallets?: number; seconds?: number; perSecond?: number } = {}) {
  const clock = manualClock();
  const generator = createTrafficGenerator({
    seed: options.seed ?? 1,
    stream: options.stream ?? 0,
    wallets: options.wallets ?? 200,
    now: clock.now,
  });
  const txs: Transaction[] = [];
  for (let s = 0; s < (options.seconds ?? 20); s++) {
    txs.push(...generator.next(options.perSecond ?? 400));
    clock.advance(1000);
  }
  return { generator, txs };
}

describe("createRandom", () => {
  it("repeats its sequence for one seed and stream, and changes it with either", () => {
    const take = (seed: number, stream: number) => {
      const r = createRandom(seed, stream);
      return Array.from({ length: 5 }, () => r.next());
    };
    expect(take(7, 0)).toEqual(take(7, 0));
    expect(take(7, 0)).not.toEqual(take(8, 0));
    expect(take(7, 0)).not.toEqual(take(7, 1));
  });

  it("keeps int within its inclusive bounds and reaches both ends", () => {
    const r = createRandom(3);
    const seen = new Set(Array.from({ length: 2000 }, () => r.int(1, 6)));
    expect([...seen].sort()).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it("picks by weight", () => {
    const r = createRandom(4);
    const counts = { a: 0, b: 0 };
    for (let i = 0; i < 10_000; i++) counts[r.weighted({ a: 3, b: 1 })]++;
    expect(counts.a / 10_000).toBeGreaterThan(0.72);
    expect(counts.a / 10_000).toBeLessThan(0.78);
  });

  it("makes addresses of 32 bytes and signatures of 64 bytes, all distinct", () => {
    const r = createRandom(5);
    const addresses = Array.from({ length: 500 }, () => r.address());
    const signatures = Array.from({ length: 500 }, () => r.signature());
    expect(addresses.every(isAddress)).toBe(true);
    expect(signatures.every(isSignature)).toBe(true);
    expect(new Set([...addresses, ...signatures]).size).toBe(1000);
  });
});

describe("createPopulation", () => {
  it("is the same for one seed and differs for another", () => {
    expect(createPopulation(9, 50)).toEqual(createPopulation(9, 50));
    expect(createPopulation(9, 50).wallets[0]).not.toBe(createPopulation(10, 50).wallets[0]);
  });

  it("labels flagged counterparties, exchanges and pools, none of them a tracked wallet", () => {
    const population = createPopulation(2, 1000);
    expect(population.wallets).toHaveLength(1000);
    expect(population.flagged).toHaveLength(20);
    const wallets = new Set(population.wallets);
    expect(population.labels.some((l) => wallets.has(l.address))).toBe(false);
    const flaggedLabels = population.labels.filter((l) => population.flagged.includes(l.address));
    expect(new Set(flaggedLabels.map((l) => l.category))).toEqual(
      new Set(["sanctioned", "hack", "mixer", "darknet", "scam", "flagged", "gambling"]),
    );
    expect(flaggedLabels.filter((l) => l.score >= 75).length).toBeGreaterThan(flaggedLabels.length / 2);
    expect(population.labels.filter((l) => l.category === "exchange").map((l) => l.address)).toEqual(population.exchanges);
    expect(population.labels.every((l) => isAddress(l.address) && l.score >= 0 && l.score <= 100)).toBe(true);
  });

  it("gives every wallet a starting snapshot that POST /v1/ingest/accounts accepts", () => {
    const population = createPopulation(2, 100);
    const snapshots = createSnapshots(2, population);
    expect(snapshots.map((s) => s.address)).toEqual(population.wallets);
    const valid = Compile(AccountSnapshotSchema);
    for (const snapshot of snapshots) expect(valid.Check(snapshot), JSON.stringify(snapshot)).toBe(true);
    expect(snapshots.some((s) => s.tokenAccounts.length > 0 && s.nfts.length > 0)).toBe(true);
  });
});

describe("createTrafficGenerator", () => {
  const { generator, txs } = generate();
  const wallets = new Set(generator.population.wallets);

  it("produces transactions that POST /v1/ingest/transactions accepts, with real base58 lengths", () => {
    const valid = Compile(IngestTransactionSchema);
    for (const tx of txs) {
      expect(valid.Check(tx), JSON.stringify(tx)).toBe(true);
      expect(isSignature(tx.signature) && isAddress(tx.from) && isAddress(tx.to)).toBe(true);
    }
    expect(new Set(txs.map((t) => t.signature)).size).toBe(txs.length);
  });

  it("always involves a tracked wallet on one side", () => {
    expect(txs.every((t) => wallets.has(t.from) || wallets.has(t.to))).toBe(true);
    expect(txs.some((t) => wallets.has(t.from) && wallets.has(t.to))).toBe(true);
  });

  it("mixes transfers, swaps, stakes, NFT trades and other calls, with about 3 % failed", () => {
    const types = new Map<string, number>();
    for (const t of txs) types.set(t.type, (types.get(t.type) ?? 0) + 1);
    expect([...types.keys()].sort()).toEqual(["nft", "other", "stake", "swap", "transfer"]);
    expect(types.get("transfer")! / txs.length).toBeGreaterThan(0.45);
    expect(types.get("swap")! / txs.length).toBeGreaterThan(0.15);
    const failed = txs.filter((t) => t.status === "failed").length / txs.length;
    expect(failed).toBeGreaterThan(0.02);
    expect(failed).toBeLessThan(0.04);
  });

  it("names well-known tokens by symbol with their mint, and SOL without one", () => {
    const mintOf = new Map<string, string>(WELL_KNOWN_TOKENS.map((t) => [t.symbol, t.mint]));
    for (const tx of txs) {
      if (tx.token === "SOL") expect(tx.mint).toBeNull();
      else expect(tx.mint).toBe(mintOf.get(tx.token));
    }
    expect(new Set(txs.map((t) => t.token))).toEqual(new Set(["SOL", "USDC", "USDT", "BONK", "JUP"]));
  });

  it("keeps amounts positive and within each token's decimals, fees in SOL", () => {
    const decimals: Record<string, number> = { SOL: 9, USDC: 6, USDT: 6, BONK: 5, JUP: 6 };
    for (const tx of txs) {
      expect(tx.amount).toBeGreaterThan(0);
      expect(Number(tx.amount.toFixed(decimals[tx.token]!))).toBe(tx.amount);
      expect(tx.fee).toBeGreaterThanOrEqual(0.000005);
      expect(tx.fee).toBeLessThan(0.001);
    }
  });

  it("sends some transactions to or from flagged counterparties, and some large transfers", () => {
    const flagged = new Set(generator.population.flagged);
    expect(txs.filter((t) => flagged.has(t.from) || flagged.has(t.to)).length).toBeGreaterThan(txs.length * 0.008);
    const large = txs.filter((t) => (t.token === "SOL" && t.amount >= 1000) || (t.token === "USDC" && t.amount >= 250_000));
    expect(large.length).toBeGreaterThan(txs.length * 0.002);
  });

  it("has bursts: one wallet making dozens of transactions in a short stretch", () => {
    // 200 wallets share 8,000 transactions: without bursts a wallet makes ~5 in any 100.
    let busiest = 0;
    for (let i = 0; i + 100 <= txs.length; i += 50) {
      const counts = new Map<string, number>();
      for (const t of txs.slice(i, i + 100)) {
        for (const side of new Set([t.from, t.to])) if (wallets.has(side)) counts.set(side, (counts.get(side) ?? 0) + 1);
      }
      busiest = Math.max(busiest, ...counts.values());
    }
    expect(busiest).toBeGreaterThanOrEqual(20);
  });

  it("stamps blockTime from the clock and never lets slot or blockTime go backwards", () => {
    expect(txs[0]!.blockTime).toBe(START / 1000);
    expect(txs.at(-1)!.blockTime).toBe(START / 1000 + 19);
    for (let i = 1; i < txs.length; i++) {
      expect(txs[i]!.slot).toBeGreaterThanOrEqual(txs[i - 1]!.slot);
      expect(txs[i]!.blockTime).toBeGreaterThanOrEqual(txs[i - 1]!.blockTime);
    }
    // About 2.5 slots a second, as on mainnet.
    const slotsPerSecond = (txs.at(-1)!.slot - txs[0]!.slot) / 19;
    expect(slotsPerSecond).toBeGreaterThan(2);
    expect(slotsPerSecond).toBeLessThan(30);
  });

  it("holds slot and blockTime when the clock steps back", () => {
    const clock = manualClock();
    const g = createTrafficGenerator({ seed: 1, wallets: 10, now: clock.now });
    const first = g.next(10).at(-1)!;
    clock.set(START - 60_000);
    const after = g.next(10)[0]!;
    expect(after.blockTime).toBe(first.blockTime);
    expect(after.slot).toBeGreaterThanOrEqual(first.slot);
  });

  it("repeats itself for one seed and stream; another stream keeps the wallets but not the signatures", () => {
    const again = generate({ seconds: 2 });
    expect(again.txs).toEqual(txs.slice(0, again.txs.length));
    const other = generate({ stream: 42, seconds: 1 });
    expect(other.generator.population.wallets).toEqual(generator.population.wallets);
    expect(other.txs[0]!.signature).not.toBe(txs[0]!.signature);
  });
});

describe("pacing and retries", () => {
  it("sends half a second's worth per batch, within 1..1000", () => {
    expect(defaultBatchSize(1)).toBe(1);
    expect(defaultBatchSize(500)).toBe(250);
    expect(defaultBatchSize(40_000)).toBe(1000);
  });

  it("waits as long as Retry-After says, clamped to 30 s, else doubles from 250 ms up to 5 s", () => {
    expect(retryDelayMs(1, "2")).toBe(2000);
    expect(retryDelayMs(1, "0")).toBe(50);
    expect(retryDelayMs(1, "3600")).toBe(30_000);
    expect([1, 2, 3, 6, 10].map((a) => retryDelayMs(a, undefined))).toEqual([250, 500, 1000, 5000, 5000]);
    expect(retryDelayMs(2, "Wed, 21 Oct 2015 07:28:00 GMT")).toBe(500);
  });
});
