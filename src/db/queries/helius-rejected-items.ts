// The Helius webhook's dead letters (helius_rejected_items): the items a delivery carried that
// the webhook refused, kept whole for an operator.
import { createHash } from "node:crypto";
import type { RefusedItem } from "../../ingest/helius-triage.ts";
import type { Sql } from "../client.ts";

/**
 * Keeps each refused item once, one row per distinct item text. An item kept already (Helius
 * retrying the delivery, an operator's replay) adds no row: its row takes this refusal's errors,
 * counts one more refusal and dates it, and keeps its first refusal's time (received_at), so
 * that it says why the item is refused now, not only why it was first. One statement, whatever
 * the delivery holds. Returns how many were new.
 */
export async function keepRefusedHeliusItems(sql: Sql, refused: readonly RefusedItem[]): Promise<number> {
  if (refused.length === 0) return 0;
  // JSON.stringify writes a NUL as \u0000: text Postgres takes, and json (not jsonb) keeps.
  const rows = onePerItem(
    refused.map((r) => {
      const item = keptItemText(r.item, r.signature, r.sent);
      return { signature: r.signature, errors: JSON.stringify(r.errors), item, sha256: createHash("sha256").update(item).digest("hex") };
    }),
  )
    // In key order, so that two deliveries holding the same items take their locks alike.
    .sort((a, b) => (a.sha256 < b.sha256 ? -1 : a.sha256 > b.sha256 ? 1 : 0));
  // A row is new when this statement's refusal is its first (an updated one counts 2 or more).
  const [counted] = await sql<{ inserted: number }[]>`
    with kept as (
      insert into helius_rejected_items as r (signature, errors, item, item_sha256)
      select signature, errors::jsonb, item::json, sha256
      from unnest(${rows.map((r) => r.signature)}::text[], ${rows.map((r) => r.errors)}::text[],
                  ${rows.map((r) => r.item)}::text[], ${rows.map((r) => r.sha256)}::text[]) as u(signature, errors, item, sha256)
      on conflict (item_sha256) do update
        set errors = excluded.errors, refusals = r.refusals + 1, last_refused_at = now()
      returning r.refusals
    )
    select count(*) filter (where refusals = 1)::int as inserted from kept`;
  return counted!.inserted;
}

/**
 * The first of the refused items with one text (a delivery may hold an item twice, each copy
 * refused at its own index): an upsert may not touch one row twice, and a delivery is one
 * refusal of the item, whose errors are those of its first copy.
 */
function onePerItem<T extends { sha256: string }>(rows: readonly T[]): T[] {
  const first = new Map<string, T>();
  for (const row of rows) if (!first.has(row.sha256)) first.set(row.sha256, row);
  return [...first.values()];
}

/**
 * Deeper than any Helius item could be (they nest five or six levels), and far below where
 * JSON.stringify overflows the call stack (about 4,500 levels here) or Postgres's json parser
 * refuses to go.
 */
export const MAX_KEPT_DEPTH = 1_000;

/**
 * The item's JSON text (`sent`, its text as received, when given); for an item nested deeper than
 * MAX_KEPT_DEPTH, which cannot be written out, a note saying so in its place (with its signature,
 * when readable), so that the rest of the delivery is still answered 202 and the refusal is still
 * on record.
 */
export function keptItemText(item: unknown, signature: string | null, sent?: string): string {
  if (!nestsDeeperThan(item, MAX_KEPT_DEPTH)) return sent ?? JSON.stringify(item);
  return JSON.stringify({ notKept: `the item nests deeper than ${MAX_KEPT_DEPTH} levels`, signature });
}

/** A walk with its own stack: recursion is what overflows on such a value. */
export function nestsDeeperThan(value: unknown, limit: number): boolean {
  const pending: [unknown, number][] = [[value, 0]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [node, depth] = next;
    if (node === null || typeof node !== "object") continue;
    if (depth >= limit) return true;
    for (const child of Object.values(node)) pending.push([child, depth + 1]);
  }
  return false;
}
