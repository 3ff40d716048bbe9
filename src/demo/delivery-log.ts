// Prints every email and SMS notification as it is delivered (webhooks are printed by the
// sink that received them), by watching the notifications table — the source of truth. Only
// the demo caller's: attached to a service (docker compose), the table holds every customer's,
// whose addresses and phone numbers are not the feed's to print.
import type { Sql } from "../db/client.ts";
import { oneLine } from "../notify/render.ts";

type Row = { id: string; channel: string; destination: string; status: string; reason: string | null; condition: string | null };

export function watchDeliveries(sql: Sql, caller: string, print: (line: string) => void, intervalMs = 500): () => void {
  const printed = new Set<string>();
  let since = new Date(Date.now() - 1000);
  let running = false;
  const timer = setInterval(async () => {
    if (running) return;
    running = true;
    try {
      // An ISO string, not a Date: drizzle replaces postgres.js's date serializer on this pool.
      const checkFrom = new Date(since.getTime() - 5000).toISOString();
      since = new Date();
      const rows = await sql<Row[]>`
        select n.id, n.channel, n.destination, n.status,
               n.payload->'data'->>'reason' as reason, n.payload->'data'->>'condition' as condition
        from notifications n join alerts a on a.id = n.alert_id
        where n.updated_at >= ${checkFrom} and n.status in ('delivered', 'failed')
          and (n.channel <> 'webhook' or n.status = 'failed') and a.owner = ${caller}
        order by n.updated_at`;
      for (const row of rows) {
        if (printed.has(row.id)) continue;
        printed.add(row.id);
        const mark = row.status === "delivered" ? "delivered" : "FAILED";
        // The reason as one plain line: a feed's text must not move the terminal's cursor or clear it.
        print(`${row.channel.padEnd(7)} ${mark} → ${row.destination}  [${row.condition}] ${oneLine(row.reason ?? "")}`);
      }
    } catch (error) {
      print(`(could not read notifications: ${(error as Error).message})`);
    } finally {
      running = false;
    }
  }, intervalMs);
  return () => clearInterval(timer);
}
