// Optimistic concurrency for a wallet and an alert: an ETag on their GET and PATCH answers, and
// If-Match on their PATCH and DELETE, so that two clients that read, change and write back the
// same item cannot silently undo each other (RFC 9110 sections 8.8.3, 13.1.1 and 13.2).
//
// The tag is strong, and a hash of the representation itself (what GET answers), not of a
// version column: If-Match compares strongly (RFC 9110 13.1.1), so a weak tag could never
// match, and a strong one must change whenever the representation does. Derived from what is
// shown, it does so whoever wrote the change (a PATCH, the alert health that disables an alert,
// the ingest that moves a wallet's balance or activity), with no column that each writer must
// remember to bump. The price: a wallet's tag moves with its chain data too, so a PATCH under
// If-Match after ingest touched the wallet is a 412, and the client reads again and retries.
// Pure: the routes read the header, the queries judge it under the row's lock.
import { createHash } from "node:crypto";
import { Type } from "@fastify/type-provider-typebox";
import { canonicalJson } from "./idempotency.ts";
import { ProblemError, invalid } from "./problem.ts";
import { problemResponses } from "./schemas.ts";

export const IF_MATCH_HEADER = "if-match";

/** The strong entity tag of a representation: a hash of its canonical JSON, quoted (22 base64url characters, 132 bits). */
export function entityTagOf(representation: unknown): string {
  return `"${createHash("sha256").update(canonicalJson(representation)).digest("base64url").slice(0, 22)}"`;
}

/** Whether the item as it is now (its representation) satisfies the request's If-Match. */
export type IfMatch = (representation: unknown) => boolean;

/**
 * One entity tag of an If-Match list: W/ (weak, never matching) and the quoted tag, whose
 * characters are RFC 9110's etagc (visible ASCII but ", and obs-text), then a comma or the end.
 * Empty elements (", ,") are skipped, as RFC 9110 5.6.1 asks of a recipient.
 */
const LISTED_TAG = /[ \t,]*((?:W\/)?"[!#-~\u0080-\u00ff]*")[ \t]*(?:,|$)/y;

const MALFORMED = 'must be * or entity tags in double quotes as an ETag header gave them ("…"), separated by commas';

/**
 * The request's If-Match (Node joins repeated ones with commas) as a test of the item's
 * current representation, or undefined when it has none. `*` holds for any item that exists; a list holds when one of its tags is the item's
 * current tag, compared strongly: a weak tag (W/"…") never holds, as RFC 9110 13.1.1 says. A
 * value that is neither is a 400: ignored, the write would go ahead unguarded.
 */
export function ifMatchOf(text: string | undefined): IfMatch | undefined {
  if (text === undefined) return undefined;
  if (text.trim() === "*") return () => true;
  const tags = listedTags(text);
  if (!tags) throw invalid(`headers.${IF_MATCH_HEADER}`, MALFORMED);
  return (representation) => tags.includes(entityTagOf(representation));
}

function listedTags(text: string): string[] | undefined {
  const tags: string[] = [];
  let at = 0;
  for (let match = readTag(text, at); match; match = readTag(text, at)) {
    tags.push(match[1]!);
    at = LISTED_TAG.lastIndex;
  }
  return tags.length > 0 && /^[ \t,]*$/.test(text.slice(at)) ? tags : undefined;
}

function readTag(text: string, at: number): RegExpExecArray | null {
  if (at >= text.length) return null;
  LISTED_TAG.lastIndex = at;
  return LISTED_TAG.exec(text);
}

/** The 412 of a write whose If-Match did not hold: nothing was changed. */
export const preconditionFailed = (what: string) =>
  new ProblemError(
    "precondition_failed",
    `${what} is not as If-Match says: it has changed since that ETag was read (a weak W/ tag never matches), and nothing was changed; ` +
      "GET it again, make your change to what it holds now, and send its new ETag",
  );

/** The request header on the operations that honour it, for validation and the OpenAPI document. */
export const IfMatchHeaders = Type.Object({
  [IF_MATCH_HEADER]: Type.Optional(
    Type.String({
      description:
        "the ETag of the item as last read: the change is made only if the item is still as it was then (else 412, and nothing changes); " +
        '* for any existing item; several tags may be given, separated by commas; a weak tag (W/"…") never matches. ' +
        "Without it the request goes ahead whatever changed since: the last write wins",
    }),
  ),
});

/** A 200 that carries the item's ETag, for the OpenAPI document (liftRequiredHeaders marks it required). */
export const withEntityTag = <R extends object>(response: R) => ({
  ...response,
  headers: {
    ...(response as { headers?: Record<string, unknown> }).headers,
    etag: {
      type: "string",
      description:
        "the item's strong entity tag as this answer shows it: send it in If-Match to change or delete the item only if nothing has changed since. " +
        "It changes whenever anything the answer shows changes, whoever changed it",
      required: true,
    },
  },
});

/** The 412 of the operations that honour If-Match. */
export const PreconditionFailedResponse = {
  412: {
    ...problemResponses(412)[412],
    description:
      "RFC 9457 problem details, code precondition_failed: If-Match named none of the item's current ETag (it changed since it was read); nothing was changed",
  },
};
