// Fixed chain values for the condition tests, so a failing sentence reads the same every run.
import type { AlertRule, CounterpartyRisk } from "../../../src/domain/conditions/index.ts";
import type { Condition, Transaction } from "../../../src/domain/types.ts";
import { MINTS } from "../../helpers/chain.ts";

export const WALLET = "CoEnXgSVcycv9wuPFFitTXJWbJh2Eaoa6pRbzK3b9ALH";
export const OTHER = "A3CbMRJeFLScHWEA3ZfVdZU6Gn5bJaDuB7DnMUZdE6Fb";
export const THIRD = "EnW4CwtRs8E5gytqTLiNAat69YQV4t6XJYssqbsUwQ1k";
export const SIGNATURE = "7Ve93FwcJYok4rCYj72BSTdaV1dQXTj2Qoz9BMzA5ssbpHcPdC9FyzpNsa294MVfYfrFefDP3NQusAQ535Be4ek";
export { MINTS };

/** A successful 25,000 USDC transfer from WALLET to OTHER unless told otherwise. */
export function tx(overrides: Partial<Transaction> = {}): Transaction {
  return {
    signature: SIGNATURE,
    type: "transfer",
    amount: 25_000,
    token: "USDC",
    mint: MINTS.USDC,
    from: WALLET,
    to: OTHER,
    blockTime: 1_732_000_000,
    slot: 300_000_000,
    fee: 0.000005,
    status: "success",
    ...overrides,
  };
}

/** An alert on WALLET with the condition's default-ish threshold unless told otherwise. */
export function rule(condition: Condition, overrides: Partial<AlertRule> = {}): AlertRule {
  const thresholds: Record<Condition, number> = {
    large_transfer: 10_000,
    suspicious_counterparty: 75,
    unusual_activity: 5,
    risk_score_increase: 10,
  };
  return {
    alertId: `alr_${condition}`,
    walletId: "wal_test",
    address: WALLET,
    condition,
    threshold: thresholds[condition],
    token: null,
    baselineScore: null,
    ...overrides,
  };
}

export function counterparty(overrides: Partial<CounterpartyRisk> = {}): CounterpartyRisk {
  return { address: OTHER, labelScore: null, labelCategory: null, riskScore: null, ...overrides };
}
