// What the demo removes when it starts again: the wallets it seeded itself on an earlier start,
// each tagged DEMO_TAG, with their alerts (deleted through the API, as any client deletes, so
// that the alerts are archived as a DELETE archives them). Nothing else of its caller goes: in
// docker compose a customer uses the token the feed prints, and the wallets and alerts made
// with it stayed only until the feed's next start, when the demo deleted every wallet of its
// caller straight from the database.
import type { Sql } from "../db/client.ts";
import type { ApiCall } from "./api-client.ts";

/** The tag on every wallet the demo seeds: the mark of what it may delete. */
export const DEMO_TAG = "demo-seed";

/**
 * Deletes the caller's wallets tagged DEMO_TAG; how many it deleted. Found in the database (the
 * API's list leaves tags out of its summaries), deleted through the API.
 */
export async function removeEarlierRun(sql: Sql, api: ApiCall, caller: string): Promise<number> {
  const seeded = await sql<{ id: string }[]>`
    select id from tracked_wallets where owner = ${caller} and ${DEMO_TAG} = any(tags) order by id`;
  for (const { id } of seeded) await api("DELETE", `/v1/wallets/${id}`);
  return seeded.length;
}
