// A period given by two date-times, since (at or after) and until (before): the events lists'
// `?since&until` (what a desk that must answer for "this wallet, March" exports) and a bulk
// redelivery's body. The schema has checked each edge is an RFC 3339 date-time with its zone;
// here, what it cannot: that it names an instant, and that the window is not empty.
import type { EventWindow } from "../../db/queries/events.ts";
import { invalid } from "../problem.ts";

const EXAMPLE = "2026-03-01T00:00:00Z";

/**
 * The edges as instants (Unix ms), `at` naming where they came from (`query`, `body`) and
 * `defaultUntil` standing in for a missing until. They are compared as given, then those before
 * 1970 are 1970 (no event or notification is older, and PostgreSQL has no year 0): clamped first,
 * a window wholly before 1970 read as empty and was refused as "until must be later than since",
 * which it is.
 */
export function windowEdges(
  at: "query" | "body",
  edges: { since?: string | undefined; until?: string | undefined },
  defaultUntil?: number,
): { since: number | undefined; until: number | undefined } {
  const since = edges.since === undefined ? undefined : instant(`${at}.since`, edges.since);
  const until = edges.until === undefined ? defaultUntil : instant(`${at}.until`, edges.until);
  if (since !== undefined && until !== undefined && until <= since) throw invalid(`${at}.until`, "must be later than since");
  const clamped = (ms: number | undefined) => (ms === undefined ? undefined : Math.max(0, ms));
  return { since: clamped(since), until: clamped(until) };
}

/** The events lists' window, its edges ISO 8601 UTC. */
export function eventWindow(query: { since?: string | undefined; until?: string | undefined }): EventWindow {
  const { since, until } = windowEdges("query", query);
  const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());
  return { since: iso(since), until: iso(until) };
}

function instant(path: string, text: string): number {
  const ms = Date.parse(text);
  if (Number.isNaN(ms)) throw invalid(path, `must be an ISO 8601 date-time such as ${EXAMPLE}`);
  return ms;
}
