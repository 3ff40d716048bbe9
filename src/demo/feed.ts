// The demo's background traffic after the script: a few ordinary transactions every couple
// of seconds between the demo wallets and the rest of the chain, so the history and the
// dashboards keep moving. Amounts stay small: the scripted batches are what fire the alerts.
import { randomBytes, randomInt } from "node:crypto";
import { base58Encode } from "../domain/base58.ts";
import type { Transaction, TransactionType } from "../domain/types.ts";
import type { ApiCall } from "./api-client.ts";
import { MINTS, newSignature, type DemoCast } from "./scenario.ts";

const TYPES: TransactionType[] = ["transfer", "transfer", "swap", "stake", "nft"];
const TOKENS = [
  { token: "SOL", mint: null, max: 5 },
  { token: "USDC", mint: MINTS.USDC, max: 900 },
  { token: "BONK", mint: MINTS.BONK, max: 2_000_000 },
];

export function ordinaryTransaction(cast: DemoCast, slot: number, nowSeconds: number): Transaction {
  const wallet = cast.wallets[randomInt(cast.wallets.length)]!.address;
  const other = base58Encode(randomBytes(32));
  const { token, mint, max } = TOKENS[randomInt(TOKENS.length)]!;
  const outgoing = randomInt(2) === 0;
  return {
    signature: newSignature(),
    type: TYPES[randomInt(TYPES.length)]!,
    amount: Math.round(Math.random() * max * 100) / 100,
    token,
    mint,
    from: outgoing ? wallet : other,
    to: outgoing ? other : wallet,
    blockTime: nowSeconds,
    slot,
    fee: 0.000005,
    status: randomInt(25) === 0 ? "failed" : "success",
  };
}

export function startBackgroundFeed(api: ApiCall, cast: DemoCast, say: (line: string) => void, everyMs = 2_000): () => void {
  let slot = 310_000_000 + Math.floor(Date.now() / 400);
  let posting = false;
  const timer = setInterval(async () => {
    if (posting) return;
    posting = true;
    const now = Math.floor(Date.now() / 1000);
    const batch = Array.from({ length: 3 }, () => ordinaryTransaction(cast, slot++, now));
    try {
      await api("POST", "/v1/ingest/transactions", { transactions: batch });
    } catch (error) {
      say(`feed: ${(error as Error).message}`);
    } finally {
      posting = false;
    }
  }, everyMs);
  return () => clearInterval(timer);
}
