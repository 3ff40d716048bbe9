// Idempotency-Key on POST /v1/risk/alerts: a client that lost the answer to a create (a
// timeout, a dropped connection) sends the same request again with the same key and gets the
// alert the first one made, instead of a second alert that fires and notifies twice (with
// webhook-ids a receiver cannot match). The key is the caller's, unique per caller for as
// long as the alert exists; the first answer is replayed for a day, secret included (the
// caller may never have seen it), unless the secret was rotated since: the answer would then
// carry a secret the first one did not, to anyone who has the key (a 409 names the alert
// instead). Pure: the store is the alerts table (queries/alerts.ts).
import { createHash } from "node:crypto";
import { Type } from "@fastify/type-provider-typebox";

export const IDEMPOTENCY_HEADER = "idempotency-key";

/** How long a replay answers as the first request did, webhook secret included. */
export const REPLAY_WINDOW_SECONDS = 24 * 3600;

export const IdempotencyHeaders = Type.Object({
  [IDEMPOTENCY_HEADER]: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 255,
      pattern: "^[\\x21-\\x7e]+$",
      description: "a key of 1-255 visible ASCII characters, chosen by the client per create (a UUID will do)",
    }),
  ),
});

/** The body as a canonical string (keys sorted at every level), hashed. */
export function requestFingerprint(body: unknown): string {
  return createHash("sha256").update(canonicalJson(body)).digest("base64url");
}

/** JSON with every object's keys sorted, at every level: equal data, equal text (also etag.ts's). */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, field]) => field !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, field]) => `${JSON.stringify(key)}:${canonicalJson(field)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

export type ReplayVerdict =
  | { kind: "replay" }
  | { kind: "different-request" }
  | { kind: "expired" }
  | { kind: "secret-rotated" };

/** What a request under a key already used gets: the first answer, or a 409 saying why not. */
export function replayVerdict(
  earlier: { fingerprint: string; ageSeconds: number; secretRotated: boolean },
  fingerprint: string,
): ReplayVerdict {
  if (earlier.fingerprint !== fingerprint) return { kind: "different-request" };
  if (earlier.ageSeconds > REPLAY_WINDOW_SECONDS) return { kind: "expired" };
  if (earlier.secretRotated) return { kind: "secret-rotated" };
  return { kind: "replay" };
}
