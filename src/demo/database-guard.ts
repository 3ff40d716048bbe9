// The demo's second guard against a database that is not its own: before it migrates anything,
// deletes its caller or starts a worker there, the database must hold no wallets and no alerts
// of any caller but the demo's. A database the service uses has them; the demo's own, or a new
// one, does not. Asked before the migrations, so a database that has not been migrated (no such
// tables yet) passes.
import type { Sql } from "../db/client.ts";

/** Whether the database holds wallets or alerts of callers other than `caller`, and which of them. */
export async function otherCallersData(sql: Sql, caller: string): Promise<{ wallets: boolean; alerts: boolean }> {
  const [tables] = await sql<{ wallets: boolean; alerts: boolean }[]>`
    select to_regclass('tracked_wallets') is not null as wallets, to_regclass('alerts') is not null as alerts`;
  const wallets = tables?.wallets ? await hasOtherOwner(sql, "tracked_wallets", caller) : false;
  const alerts = tables?.alerts ? await hasOtherOwner(sql, "alerts", caller) : false;
  return { wallets, alerts };
}

async function hasOtherOwner(sql: Sql, table: "tracked_wallets" | "alerts", caller: string): Promise<boolean> {
  const [row] = await sql<{ found: boolean }[]>`select exists (select 1 from ${sql(table)} where owner <> ${caller}) as found`;
  return Boolean(row?.found);
}

/** The refusal, in one sentence naming the database (password hidden) and the setting to change; undefined when the database is the demo's to use. */
export function foreignDatabaseRefusal(
  found: { wallets: boolean; alerts: boolean },
  where: { shownUrl: string; setting: string; caller: string },
): string | undefined {
  const held = [found.wallets && "wallets", found.alerts && "alerts"].filter(Boolean).join(" and ");
  if (!held) return undefined;
  return (
    `the database at ${where.shownUrl} holds ${held} of callers other than "${where.caller}": it is not the demo's ` +
    `(the demo migrates it, replaces its caller's data, and its worker delivers whatever the database owes). ` +
    `Give the demo a database of its own with ${where.setting}, e.g. ${where.setting}=postgres://postgres@127.0.0.1:5432/wallet_alerts_demo`
  );
}
