// Who takes part in the synthetic traffic: the tracked wallets, the ordinary addresses they
// deal with, exchanges, DEX pools and a set of flagged counterparties to be labelled.
// Everything here comes from the seed alone, so two runs with one seed track the same
// wallets and label the same counterparties.
import type { LabelCategory } from "../domain/types.ts";
import { WELL_KNOWN_TOKENS } from "../domain/tokens.ts";
import { createRandom, type Random } from "./random.ts";

export type SimLabel = { address: string; category: LabelCategory; score: number; source: string };

export type SimToken = {
  symbol: string;
  /** null for native SOL. */
  mint: string | null;
  decimals: number;
  /** Reference price for snapshots' usdValue; the feed does not move prices. */
  usd: number;
  /** Typical amount of one transfer, in UI units. */
  median: number;
};

const mintOf = (symbol: string): string => {
  const token = WELL_KNOWN_TOKENS.find((t) => t.symbol === symbol);
  if (!token) throw new Error(`${symbol} is not a well-known token`);
  return token.mint;
};

export const SOL: SimToken = { symbol: "SOL", mint: null, decimals: 9, usd: 150, median: 1.2 };
export const SIM_TOKENS: Readonly<Record<"USDC" | "USDT" | "BONK" | "JUP", SimToken>> = {
  USDC: { symbol: "USDC", mint: mintOf("USDC"), decimals: 6, usd: 1, median: 150 },
  USDT: { symbol: "USDT", mint: mintOf("USDT"), decimals: 6, usd: 1, median: 120 },
  BONK: { symbol: "BONK", mint: mintOf("BONK"), decimals: 5, usd: 0.00002, median: 4_000_000 },
  JUP: { symbol: "JUP", mint: mintOf("JUP"), decimals: 6, usd: 0.9, median: 300 },
};

// Score per category: most at or above 75, the default threshold of suspicious_counterparty.
const FLAGGED_CATEGORIES: readonly { category: LabelCategory; score: number }[] = [
  { category: "sanctioned", score: 100 },
  { category: "hack", score: 95 },
  { category: "mixer", score: 90 },
  { category: "darknet", score: 90 },
  { category: "scam", score: 85 },
  { category: "flagged", score: 75 },
  { category: "gambling", score: 60 },
];

export type Population = {
  wallets: readonly string[];
  /** Ordinary addresses: friends, merchants, NFT traders, programs. */
  externals: readonly string[];
  exchanges: readonly string[];
  pools: readonly string[];
  flagged: readonly string[];
  /** Labels for the flagged counterparties, the exchanges and the pools. */
  labels: readonly SimLabel[];
};

const SOURCE = "wallet-alerts simulator";

const addresses = (random: Random, count: number) => Array.from({ length: count }, () => random.address());

export function createPopulation(seed: number, walletCount: number): Population {
  if (!Number.isInteger(walletCount) || walletCount < 1) throw new Error("the population needs at least one wallet");
  const random = createRandom(seed, 0x706f70); // its own stream: the traffic never shifts it
  const wallets = addresses(random, walletCount);
  const externals = addresses(random, Math.max(50, walletCount * 2));
  const exchanges = addresses(random, 6);
  const pools = addresses(random, 8);
  const flaggedCount = Math.min(500, Math.max(FLAGGED_CATEGORIES.length, Math.round(walletCount * 0.02)));
  const flaggedLabels = Array.from({ length: flaggedCount }, (_, i): SimLabel => {
    const { category, score } = FLAGGED_CATEGORIES[i % FLAGGED_CATEGORIES.length]!;
    return { address: random.address(), category, score, source: SOURCE };
  });
  const labels: SimLabel[] = [
    ...flaggedLabels,
    ...exchanges.map((address): SimLabel => ({ address, category: "exchange", score: 10, source: SOURCE })),
    ...pools.map((address): SimLabel => ({ address, category: "defi", score: 5, source: SOURCE })),
  ];
  return { wallets, externals, exchanges, pools, flagged: flaggedLabels.map((l) => l.address), labels };
}

export type AccountSnapshot = {
  address: string;
  balance: number;
  tokenAccounts: { mint: string; symbol: string; balance: number; usdValue: number }[];
  nfts: { mint: string; name: string; collection: string; floorPrice: number }[];
};

const COLLECTIONS = ["Mad Lads", "Tensorians", "Claynosaurz", "Okay Bears", "DeGods", "Famous Fox Federation"];

/** Starting balances, token accounts and NFTs of the tracked wallets (POST /v1/ingest/accounts). */
export function createSnapshots(seed: number, population: Population): AccountSnapshot[] {
  const random = createRandom(seed, 0x736e70);
  return population.wallets.map((address) => {
    const tokens = Object.values(SIM_TOKENS).filter(() => random.chance(0.5));
    return {
      address,
      balance: roundTo(random.logNormal(8, 1.5), 9),
      tokenAccounts: tokens.map((token) => {
        const balance = roundTo(random.logNormal(token.median * 4, 1.2), token.decimals);
        return { mint: token.mint!, symbol: token.symbol, balance, usdValue: roundTo(balance * token.usd, 6) };
      }),
      nfts: Array.from({ length: random.chance(0.3) ? random.int(1, 4) : 0 }, () => {
        const collection = random.pick(COLLECTIONS);
        return {
          mint: random.address(),
          name: `${collection} #${random.int(1, 9999)}`,
          collection,
          floorPrice: roundTo(random.logNormal(400, 1), 2),
        };
      }),
    };
  });
}

/** Rounds to the token's decimals, never below its smallest unit. */
export function roundTo(value: number, decimals: number): number {
  const unit = 10 ** -decimals;
  return Math.max(unit, Number(value.toFixed(decimals)));
}
