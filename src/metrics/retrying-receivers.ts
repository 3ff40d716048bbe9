// How many webhook receivers have notifications waiting to be tried again: what tells the
// worker's own fault from a customer's. One customer's receiver that is down fills the retrying
// backlog as fast as its alerts fire (400 alerts to one closed port: ~6 notifications a second,
// 942 retrying after 2.5 minutes) while every other receiver is fine; the worker's own way out
// or DNS failing fails every receiver at once. A receiver is what the worker's log names and its
// slots are kept by (host-slots.ts receiverOf): a registrable domain, or an address, so that one
// party's many hostnames, ports and paths count once.
import type { Sql } from "../db/client.ts";
import { receiverOf } from "../notify/host-slots.ts";

/**
 * The receivers of the retrying webhook notifications, counted. PostgreSQL folds the rows into
 * their distinct hosts (with the port: the URL's authority, cut with plain string functions),
 * which are far fewer than the rows, and those are folded into receivers here, where the
 * public-suffix list is. At 600,000 retrying notifications, each to a URL of its own, that took
 * about 110 ms; a regular expression over every row took 390 ms.
 */
export async function countRetryingWebhookReceivers(sql: Sql): Promise<number> {
  // The status spelled out, not bound, so that the plan can use the open notifications' partial index.
  const rows = await sql<{ authority: string }[]>`
    select distinct split_part(split_part(split_part(destination, '/', 3), '?', 1), '#', 1) as authority
    from notifications where status in ('retrying') and channel = 'webhook'`;
  return new Set(rows.map(({ authority }) => receiverOf(`http://${authority}/`) ?? authority)).size;
}
