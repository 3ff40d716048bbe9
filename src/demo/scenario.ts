// The demo's cast and script (pure). Four wallets, one alert of each condition on each
// channel, labelled counterparties, and a short script of transactions after which every
// condition has fired: a large USDC transfer, a payment to a sanctioned address (which
// fires suspicious_counterparty and, by raising the wallet's score, risk_score_increase),
// and a burst of swaps (unusual_activity).
import { randomBytes } from "node:crypto";
import { base58Encode } from "../domain/base58.ts";
import type { Condition, NotificationMethod, Transaction } from "../domain/types.ts";
import { DEMO_TAG } from "./earlier-run.ts";

export const MINTS = {
  USDC: "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
  BONK: "DezXAZ8z7PnrnRJjz3wXBoRgixCa6xjnB7YaB1pPB263",
  JUP: "JUPyiwrYJFskUPiHa7hkeR8VUtAeFoSYbKedZNsDvCN",
} as const;

export type DemoWallet = { key: "treasury" | "hot" | "maker" | "cold"; alias: string; address: string; tags: string[] };
export type DemoAlert = { wallet: DemoWallet["key"]; condition: Condition; threshold?: number; token?: string };
export type DemoCast = {
  wallets: DemoWallet[];
  sanctioned: string;
  mixer: string;
  exchange: string;
};

const newAddress = () => base58Encode(randomBytes(32));
export const newSignature = () => base58Encode(randomBytes(64));

/** Each wallet also carries DEMO_TAG: what the demo deletes on its next start, and nothing else. */
export function createCast(): DemoCast {
  return {
    wallets: [
      { key: "treasury", alias: "Treasury", address: newAddress(), tags: ["treasury", "multisig", DEMO_TAG] },
      { key: "hot", alias: "Hot wallet", address: newAddress(), tags: ["ops", DEMO_TAG] },
      { key: "maker", alias: "Market maker", address: newAddress(), tags: ["trading", "bot", DEMO_TAG] },
      { key: "cold", alias: "Cold storage", address: newAddress(), tags: ["reserve", DEMO_TAG] },
    ],
    sanctioned: newAddress(),
    mixer: newAddress(),
    exchange: newAddress(),
  };
}

/** One alert of each condition; the demo creates each on every channel. */
export const DEMO_ALERTS: readonly DemoAlert[] = [
  { wallet: "treasury", condition: "large_transfer", threshold: 10_000, token: "USDC" },
  { wallet: "hot", condition: "suspicious_counterparty", threshold: 75 },
  { wallet: "hot", condition: "risk_score_increase", threshold: 10 },
  { wallet: "maker", condition: "unusual_activity", threshold: 5 },
];

export const DEMO_CHANNELS: readonly NotificationMethod[] = ["webhook", "email", "sms"];

export function accountSnapshots(cast: DemoCast) {
  const nft = (name: string, collection: string, floorPrice: number) => ({ mint: newAddress(), name, collection, floorPrice });
  const balances: Record<DemoWallet["key"], number> = { treasury: 15_230.5, hot: 842.125, maker: 3_120.75, cold: 48_000 };
  return cast.wallets.map((wallet) => ({
    address: wallet.address,
    balance: balances[wallet.key],
    tokenAccounts: [
      { mint: MINTS.USDC, symbol: "USDC", balance: wallet.key === "treasury" ? 1_250_000 : 48_250.5, usdValue: wallet.key === "treasury" ? 1_250_000 : 48_250.5 },
      { mint: MINTS.BONK, symbol: "BONK", balance: 125_000_000, usdValue: 2_875.5 },
      { mint: MINTS.JUP, symbol: "JUP", balance: 10_400, usdValue: 8_320 },
    ],
    nfts: wallet.key === "cold" ? [nft("Mad Lad #8812", "Mad Lads", 11_420), nft("Claynosaurz #2210", "Claynosaurz", 2_310)] : [nft("Tensorian #431", "Tensorians", 1_530)],
  }));
}

export const demoLabels = (cast: DemoCast) => [
  { address: cast.sanctioned, category: "sanctioned", score: 100, source: "demo: OFAC SDN list" },
  { address: cast.mixer, category: "mixer", score: 85, source: "demo: vendor feed" },
  { address: cast.exchange, category: "exchange", score: 10, source: "demo: vendor feed" },
];

/** The script: batches to post in order, a second or so apart. blockTime is "now". */
export function scriptedBatches(cast: DemoCast, nowSeconds: number, startSlot: number): Transaction[][] {
  const wallet = (key: DemoWallet["key"]) => cast.wallets.find((w) => w.key === key)!.address;
  let slot = startSlot;
  const tx = (partial: Omit<Transaction, "signature" | "blockTime" | "slot" | "fee" | "status">): Transaction => ({
    signature: newSignature(),
    blockTime: nowSeconds,
    slot: slot++,
    fee: 0.000005,
    status: "success",
    ...partial,
  });
  const burst = Array.from({ length: 8 }, (_, i) =>
    tx({ type: "swap", amount: 150 + i * 10, token: "USDC", mint: MINTS.USDC, from: wallet("maker"), to: cast.exchange }),
  );
  return [
    [tx({ type: "transfer", amount: 25_000, token: "USDC", mint: MINTS.USDC, from: wallet("treasury"), to: cast.exchange })],
    [tx({ type: "transfer", amount: 12.5, token: "SOL", from: wallet("hot"), to: cast.sanctioned })],
    burst,
  ];
}
