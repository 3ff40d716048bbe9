// The period of GET /v1/risk/alerts/{id}/events?since&until: what a desk that must answer for
// "this wallet, March" exports. The schema has checked each edge is an RFC 3339 date-time with
// its zone; here, what it cannot: that it names an instant, and that the window is not empty.
import type { EventWindow } from "../../db/queries/events.ts";
import { invalid } from "../problem.ts";

const EXAMPLE = "2026-03-01T00:00:00Z";

/**
 * The edges as instants, ISO 8601 UTC. One before 1970 is 1970 (no event is older, and
 * PostgreSQL has no year 0), once the two are compared as given, as a redelivery's window is.
 */
export function eventWindow(query: { since?: string | undefined; until?: string | undefined }): EventWindow {
  const since = query.since === undefined ? undefined : instant("query.since", query.since);
  const until = query.until === undefined ? undefined : instant("query.until", query.until);
  if (since !== undefined && until !== undefined && until <= since) throw invalid("query.until", "must be later than since");
  const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(Math.max(0, ms)).toISOString());
  return { since: iso(since), until: iso(until) };
}

function instant(path: string, text: string): number {
  const ms = Date.parse(text);
  if (Number.isNaN(ms)) throw invalid(path, `must be an ISO 8601 date-time such as ${EXAMPLE}`);
  return ms;
}
