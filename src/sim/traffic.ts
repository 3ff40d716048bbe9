// The synthetic Solana feed: realistic transactions of the tracked wallets, in the shape of
// POST /v1/ingest/transactions. Pure apart from the clock it is given: the seed picks the
// population, the stream picks the sequence of transactions.
//
// What it produces, per transaction (defaults in TRAFFIC_MIX):
//   transfers of SOL and tokens (some between two tracked wallets), swaps against DEX pools,
//   stakes and unstakes, NFT purchases and sales, other program calls; ~3 % failed;
//   transfers with flagged counterparties; rare large transfers; and bursts, in which one
//   wallet suddenly makes dozens of transactions (what unusual_activity looks for).
// Slots and blockTimes never decrease: blockTime follows the clock, the slot follows it at
// Solana's ~400 ms per slot.
import type { Clock } from "../deps.ts";
import type { Transaction, TransactionType } from "../domain/types.ts";
import { createPopulation, roundTo, SIM_TOKENS, SOL, type Population, type SimToken } from "./population.ts";
import { createRandom, type Random } from "./random.ts";

export const TRAFFIC_MIX = {
  transfer: 40,
  tokenTransfer: 12,
  swap: 22,
  stake: 7,
  nft: 9,
  other: 3,
  flagged: 1.5,
  large: 0.5,
} as const;

export type TrafficOptions = {
  seed: number;
  wallets: number;
  now: Clock;
  /** Picks the transaction sequence; one seed with another stream gives new signatures. */
  stream?: number;
  failedRate?: number;
  /** Chance, per transaction, that a burst starts when none is under way. */
  burstRate?: number;
};

export type TrafficGenerator = {
  population: Population;
  /** The next `count` transactions, stamped with the clock's current time. */
  next: (count: number) => Transaction[];
};

// Mainnet slot 250,000,000 was produced around 2024-02-20T00:00Z; 2.5 slots a second since.
const SLOT_EPOCH_MS = Date.UTC(2024, 1, 20);
const SLOT_AT_EPOCH = 250_000_000;
const MS_PER_SLOT = 400;

type Kind = keyof typeof TRAFFIC_MIX;
type Draft = { type: TransactionType; token: SimToken; amount: number; from: string; to: string; priority?: boolean };

export function createTrafficGenerator(options: TrafficOptions): TrafficGenerator {
  const population = createPopulation(options.seed, options.wallets);
  const random = createRandom(options.seed, options.stream ?? 0);
  const failedRate = options.failedRate ?? 0.03;
  const burstRate = options.burstRate ?? 0.003;
  const draft = drafter(random, population);
  let lastSlot = 0;
  let lastTime = 0;
  let burst: { wallet: string; remaining: number } | undefined;

  const chooseWallet = (): string => {
    if (burst && random.chance(0.6)) {
      const { wallet } = burst;
      if (--burst.remaining === 0) burst = undefined;
      return wallet;
    }
    if (!burst && random.chance(burstRate)) burst = { wallet: random.pick(population.wallets), remaining: random.int(25, 60) };
    return random.pick(population.wallets);
  };

  const next = (count: number): Transaction[] => {
    const ms = options.now().getTime();
    lastTime = Math.max(lastTime, Math.floor(ms / 1000));
    lastSlot = Math.max(lastSlot, SLOT_AT_EPOCH + Math.floor((ms - SLOT_EPOCH_MS) / MS_PER_SLOT));
    return Array.from({ length: count }, () => {
      const d = draft(random.weighted(TRAFFIC_MIX), chooseWallet());
      // Several transactions share a slot; now and then the chain moves on within the batch.
      if (random.chance(0.05)) lastSlot += 1;
      const feeLamports = 5000 + (d.priority ? random.int(10_000, 200_000) : random.int(0, 20_000));
      return {
        signature: random.signature(),
        type: d.type,
        amount: roundTo(d.amount, d.token.decimals),
        token: d.token.symbol,
        mint: d.token.mint,
        from: d.from,
        to: d.to,
        blockTime: lastTime,
        slot: lastSlot,
        fee: feeLamports / 1e9,
        status: random.chance(failedRate) ? "failed" : "success",
      };
    });
  };

  return { population, next };
}

function drafter(random: Random, p: Population) {
  const either = (wallet: string, other: string, outgoing: number) =>
    random.chance(outgoing) ? { from: wallet, to: other } : { from: other, to: wallet };
  const counterparty = (wallet: string): string => {
    const roll = random.next();
    if (roll < 0.15 && p.wallets.length > 1) {
      const other = random.pick(p.wallets);
      if (other !== wallet) return other;
    }
    return roll < 0.4 ? random.pick(p.exchanges) : random.pick(p.externals);
  };
  const anyToken = () => random.pick(Object.values(SIM_TOKENS));

  return (kind: Kind, wallet: string): Draft => {
    switch (kind) {
      case "transfer":
        return { type: "transfer", token: SOL, amount: random.logNormal(SOL.median, 1.3), ...either(wallet, counterparty(wallet), 0.5) };
      case "tokenTransfer": {
        const token = anyToken();
        return { type: "transfer", token, amount: random.logNormal(token.median, 1.3), ...either(wallet, counterparty(wallet), 0.5) };
      }
      case "swap": {
        const token = random.weighted({ SOL: 45, USDC: 30, BONK: 15, JUP: 10 });
        const input = token === "SOL" ? SOL : SIM_TOKENS[token];
        return { type: "swap", token: input, amount: random.logNormal(input.median, 1.1), from: wallet, to: random.pick(p.pools), priority: true };
      }
      case "stake":
        // A stake moves SOL into a fresh stake account; an unstake takes it back out.
        return { type: "stake", token: SOL, amount: random.logNormal(25, 1), ...either(wallet, random.address(), 0.7) };
      case "nft":
        return { type: "nft", token: SOL, amount: random.logNormal(2, 1.2), ...either(wallet, random.pick(p.externals), 0.6), priority: true };
      case "other":
        return { type: "other", token: SOL, amount: random.between(0.001, 0.05), from: wallet, to: random.pick(p.externals) };
      case "flagged": {
        const token = random.chance(0.6) ? SOL : SIM_TOKENS.USDC;
        return { type: "transfer", token, amount: random.logNormal(token.median * 3, 1), ...either(wallet, random.pick(p.flagged), 0.5) };
      }
      case "large": {
        const usdc = random.chance(0.4);
        const token = usdc ? SIM_TOKENS.USDC : SOL;
        const amount = usdc ? random.between(250_000, 5_000_000) : random.between(1_000, 25_000);
        return { type: "transfer", token, amount, ...either(wallet, counterparty(wallet), 0.6) };
      }
    }
  };
}
