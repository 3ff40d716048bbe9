// The demo's second guard against a database that is not its own: before it migrates anything
// or starts a worker there, the database must hold no wallets and no alerts
// of any caller but the demo's. A database the service uses has them; the demo's own, or a new
// one, does not. Asked before the migrations, so a database that has not been migrated (no such
// tables yet) passes. Only when the demo starts its own API and worker: attached to a running
// service (docker compose's feed) it migrates nothing, starts no worker and deletes only the
// wallets it seeded itself (earlier-run.ts), so that service's customers are no reason to stop.
import type { Sql } from "../db/client.ts";
import { DEMO_DEFAULTS } from "./settings.ts";

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

/**
 * The refusal, in one sentence naming the database (password hidden) and the setting to change;
 * undefined when the database is the demo's to use. The way out names no host: the same words
 * must hold on a laptop and in a container, where 127.0.0.1 is the container itself.
 */
export function foreignDatabaseRefusal(
  found: { wallets: boolean; alerts: boolean },
  where: { shownUrl: string; setting: string; caller: string },
): string | undefined {
  const held = [found.wallets && "wallets", found.alerts && "alerts"].filter(Boolean).join(" and ");
  if (!held) return undefined;
  const name = databaseName(where.shownUrl);
  const another = name === DEMO_DATABASE_NAME ? `${DEMO_DATABASE_NAME}_2` : DEMO_DATABASE_NAME;
  return (
    `the database at ${where.shownUrl} holds ${held} of callers other than "${where.caller}": it is not the demo's ` +
    `(the demo migrates it and starts a worker that delivers whatever the database owes). ` +
    `Give the demo a database of its own: set ${where.setting} to one that no service uses (the demo creates it when it does not exist), ` +
    `e.g. the same URL with the database ${another} in place of ${name || "(none)"}`
  );
}

/** The name the demo's own database has by default. */
const DEMO_DATABASE_NAME = databaseName(DEMO_DEFAULTS.databaseUrl);

function databaseName(url: string): string {
  try {
    return decodeURIComponent(new URL(url).pathname.slice(1));
  } catch {
    return "";
  }
}
