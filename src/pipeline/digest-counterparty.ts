// The other side of a cooldown digest's strongest firing, which the digest names in full as a
// firing's notification does (a shortened address is what address poisoning counts on). A
// suppressed event keeps its reason, which names that side shortened, and its transaction's
// signature, not the leg: the side is found among the legs of that transaction, by the name
// its reason gives it, at the digest's first attempt.
import type { Sql } from "../db/client.ts";
import { loadLabels } from "../db/queries/pipeline.ts";
import { counterpartyShown } from "../domain/reason.ts";
import type { Condition, DigestCounterparty } from "../domain/types.ts";

/** The conditions whose reason names the other side of a transaction. */
const NAMING_A_COUNTERPARTY: ReadonlySet<Condition> = new Set(["large_transfer", "suspicious_counterparty"]);

type Leg = { from: string; to: string };

/**
 * The strongest firing's other side, with its labels as they are now (the digest is built at
 * the cooldown's end); undefined when the condition names none, the transaction is no longer
 * stored, or its legs do not name exactly one side (see namedCounterparty).
 */
export async function strongestCounterparty(
  sql: Sql,
  alert: { address: string; condition: Condition },
  strongest: { reason: string; transactionSignature: string | null },
): Promise<DigestCounterparty | undefined> {
  if (!NAMING_A_COUNTERPARTY.has(alert.condition) || strongest.transactionSignature === null) return undefined;
  const legs = await sql<Leg[]>`
    select from_address as "from", to_address as "to" from transactions
    where signature = ${strongest.transactionSignature} and (from_address = ${alert.address}) <> (to_address = ${alert.address})`;
  const address = namedCounterparty(alert.address, strongest.reason, legs);
  if (address === undefined) return undefined;
  const [labelled] = await loadLabels(sql, [address]);
  return { address, labels: labelled?.labels ?? [] };
}

/**
 * The one other side of `wallet` among `legs` that `reason` names (counterpartyShown), or
 * undefined: none named (a reason of several tokens' legs names no side), or two named alike
 * (lookalike addresses in one transaction), where a guess could show the desk the wrong
 * address in full.
 */
export function namedCounterparty(wallet: string, reason: string, legs: readonly Leg[]): string | undefined {
  const others = new Set(legs.map((leg) => (leg.from === wallet ? leg.to : leg.from)));
  const named = [...others].filter((other) => other !== wallet && reason.includes(counterpartyShown(other)));
  return named.length === 1 ? named[0] : undefined;
}
