// The pipeline benchmark's population and traffic: 10,000 tracked wallets of 100 callers,
// 20,000 alerts spread evenly over the four conditions, 7,000 counterparties of which
// 2,000 are labelled, and a realistic mix of transactions (transfers, swaps, stakes, NFT
// trades, failures, a few large ones, some with labelled or tracked counterparties).
import { randomBytes } from "node:crypto";
import type { Sql } from "../src/db/client.ts";
import { base58Encode } from "../src/domain/base58.ts";
import type { Condition, LabelCategory, Transaction, TransactionType } from "../src/domain/types.ts";
import { newId } from "../src/ids.ts";

export const WALLETS = 10_000;
export const ALERTS = 20_000;
const CALLERS = 100;
const COMMON_COUNTERPARTIES = 5_000;
const LABELS: Array<[LabelCategory, number, number]> = [
  // category, how many, score
  ["exchange", 800, 10],
  ["defi", 600, 5],
  ["gambling", 200, 55],
  ["scam", 200, 80],
  ["mixer", 100, 90],
  ["hack", 50, 95],
  ["sanctioned", 50, 100],
];
const CONDITIONS: Condition[] = ["large_transfer", "suspicious_counterparty", "unusual_activity", "risk_score_increase"];
const MINTS = {
  USDC: "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
  BONK: "DezXAZ8z7PnrnRJjz3wXBoRgixCa6xjnB7YaB1pPB263",
  JUP: "JUPyiwrYJFskUPiHa7hkeR8VUtAeFoSYbKedZNsDvCN",
} as const;

const address = () => base58Encode(randomBytes(32));
const signature = () => base58Encode(randomBytes(64));
const pick = <T>(items: readonly T[]): T => items[Math.floor(Math.random() * items.length)]!;

export type Population = { wallets: string[]; common: string[]; labelled: string[] };

/** Writes wallets, their address state, alerts and labels (tables must be empty). */
export async function seedPopulation(sql: Sql): Promise<Population> {
  const wallets = Array.from({ length: WALLETS }, address);
  const walletIds = wallets.map(() => newId("wal"));
  const owners = wallets.map((_, i) => `caller-${i % CALLERS}`);
  await sql`
    insert into tracked_wallets (id, owner, address, alias)
    select id, owner, address, 'wallet ' || ord
    from unnest(${walletIds}::text[], ${owners}::text[], ${wallets}::text[]) with ordinality as t(id, owner, address, ord)`;
  await sql`
    insert into address_state (address, balance)
    select address, round((random() * 5000)::numeric, 3) from unnest(${wallets}::text[]) as t(address)`;

  // Two alerts per wallet, so each condition gets ALERTS / 4; 80 % webhook, 15 % email, 5 % SMS.
  const alerts = Array.from({ length: ALERTS }, (_, i) => {
    const w = i % WALLETS;
    const condition = CONDITIONS[(w + Math.floor(i / WALLETS)) % 4]!;
    const method = i % 20 === 0 ? "sms" : i % 20 < 4 ? "email" : "webhook";
    // large_transfer thresholds are in the token's units, so each alert names its token.
    const usdc = condition === "large_transfer" && i % 2 === 1;
    return {
      id: newId("alr"),
      owner: owners[w]!,
      walletId: walletIds[w]!,
      condition,
      threshold: { large_transfer: usdc ? 5000 : 1000, suspicious_counterparty: 75, unusual_activity: 5, risk_score_increase: 10 }[condition],
      token: condition !== "large_transfer" ? null : usdc ? "USDC" : "SOL",
      method,
      webhookUrl: method === "webhook" ? "http://127.0.0.1:9/hook" : null,
      recipient: method === "email" ? "ops@example.com" : method === "sms" ? "+14155550100" : null,
    };
  });
  const col = <T>(f: (a: (typeof alerts)[number]) => T) => alerts.map(f);
  await sql`
    insert into alerts (id, owner, wallet_id, condition, threshold, token, notification_method, webhook_url, recipient, baseline_score)
    select id, owner, wallet_id, condition, threshold::numeric, token, method, url, recipient,
           case when condition = 'risk_score_increase' then 0 end
    from unnest(${col((a) => a.id)}::text[], ${col((a) => a.owner)}::text[], ${col((a) => a.walletId)}::text[],
                ${col((a) => a.condition)}::text[], ${col((a) => String(a.threshold))}::text[], ${col((a) => a.token)}::text[],
                ${col((a) => a.method)}::text[], ${col((a) => a.webhookUrl)}::text[], ${col((a) => a.recipient)}::text[])
         as t(id, owner, wallet_id, condition, threshold, token, method, url, recipient)`;

  const labelled: string[] = [];
  const labelRows: Array<{ address: string; category: string; score: number }> = [];
  for (const [category, count, score] of LABELS) {
    for (let i = 0; i < count; i++) {
      const a = address();
      labelled.push(a);
      labelRows.push({ address: a, category, score });
    }
  }
  await sql`
    insert into risk_labels (address, category, score, source)
    select address, category, score, 'bench'
    from unnest(${labelRows.map((l) => l.address)}::text[], ${labelRows.map((l) => l.category)}::text[],
                ${labelRows.map((l) => l.score)}::smallint[]) as t(address, category, score)`;
  return { wallets, common: Array.from({ length: COMMON_COUNTERPARTIES }, address), labelled };
}

/** Lognormal-ish amounts: median `median`, with a 1 % tail at 10–100× `large`. */
function amount(median: number, large: number): number {
  if (Math.random() < 0.01) return Math.round(large * (1 + Math.random() * 9) * 100) / 100;
  const normal = Math.sqrt(-2 * Math.log(1 - Math.random())) * Math.cos(2 * Math.PI * Math.random());
  return Math.round(median * Math.exp(normal * 1.2) * 1e6) / 1e6;
}

const TYPES: Array<[TransactionType, number]> = [
  ["transfer", 0.45],
  ["swap", 0.3],
  ["nft", 0.1],
  ["stake", 0.05],
  ["other", 0.1],
];

function transactionType(): TransactionType {
  let r = Math.random();
  for (const [type, share] of TYPES) {
    if (r < share) return type;
    r -= share;
  }
  return "other";
}

/**
 * `count` transactions on a chain clock that starts at `startTime` and runs at
 * `perSecond` transactions a second. Each has a tracked wallet on one side; busy wallets
 * (a skewed pick) trade more, as on the chain.
 */
export function generateTraffic(population: Population, count: number, startTime: number, perSecond: number): Transaction[] {
  const { wallets, common, labelled } = population;
  const txs: Transaction[] = [];
  for (let i = 0; i < count; i++) {
    const wallet = wallets[Math.floor(wallets.length * Math.random() ** 2)]!;
    const r = Math.random();
    const other = r < 0.6 ? pick(common) : r < 0.9 ? address() : r < 0.92 ? pick(labelled) : pick(wallets);
    const sends = Math.random() < 0.55;
    const type = transactionType();
    const coin = type === "swap" ? pick(["SOL", "USDC", "BONK", "JUP"] as const) : type === "transfer" ? pick(["SOL", "SOL", "USDC", "BONK"] as const) : "SOL";
    const value = coin === "SOL" ? amount(2, 1000) : coin === "USDC" ? amount(200, 5000) : amount(1e6, 1e9);
    txs.push({
      signature: signature(),
      type,
      amount: value,
      token: coin,
      mint: coin === "SOL" ? null : MINTS[coin],
      from: sends ? wallet : other,
      to: sends ? other : wallet,
      blockTime: startTime + Math.floor(i / perSecond),
      slot: 300_000_000 + Math.floor((i * 2.5) / perSecond),
      fee: 0.000005,
      status: Math.random() < 0.03 ? "failed" : "success",
    });
  }
  return txs;
}
