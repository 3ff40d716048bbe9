// Standard Webhooks signatures (https://www.standardwebhooks.com): the receiver checks
// `webhook-signature` against HMAC-SHA256 of "id.timestamp.body" with the key that the
// alert's `whsec_` secret encodes, and rejects stale timestamps to stop replays.
// Secrets are made by generateWebhookSecret (webhook-secret.ts).
import { createHmac } from "node:crypto";
import type { PreviousSecret } from "../db/schema.ts";
import { WEBHOOK_SECRET_PREFIX as SECRET_PREFIX } from "./webhook-secret.ts";

/** After a rotation the previous secret signs too, for this long, so receivers can switch over. */
export const PREVIOUS_SECRET_GRACE_MS = 24 * 3_600_000;

/** The HMAC key inside a `whsec_<base64>` secret (a secret without the prefix is read as base64 too). */
export function secretKey(secret: string): Buffer {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  return Buffer.from(encoded, "base64");
}

/** One `v1,<base64>` signature of a message. */
export function signatureOf(secret: string, id: string, timestampSeconds: number, body: string): string {
  const mac = createHmac("sha256", secretKey(secret)).update(`${id}.${timestampSeconds}.${body}`).digest("base64");
  return `v1,${mac}`;
}

/** The `webhook-signature` header: one signature per secret in force, space-separated. */
export function signatureHeader(secrets: readonly string[], id: string, timestampSeconds: number, body: string): string {
  return secrets.map((secret) => signatureOf(secret, id, timestampSeconds, body)).join(" ");
}

export type AlertSecrets = {
  webhookSecret: string | null;
  /** Replaced secrets, newest first, each with the end of its grace period. */
  previousWebhookSecrets: readonly PreviousSecret[];
};

/**
 * The secrets that sign a message sent at `now`: the current one, and every replaced one still
 * in its grace period. Each rotation's grace period is its own: a second rotation within a day
 * (a client retrying a rotation that timed out) must not cut short the first one's, or receivers
 * still on the original secret would reject everything at once.
 */
export function secretsInForce(alert: AlertSecrets, now: Date): string[] {
  const secrets: string[] = [];
  if (alert.webhookSecret) secrets.push(alert.webhookSecret);
  for (const previous of alert.previousWebhookSecrets) {
    if (Date.parse(previous.expiresAt) > now.getTime()) secrets.push(previous.secret);
  }
  return secrets;
}

/** The Standard Webhooks headers of one attempt; `id` stays the same across retries. */
export function webhookHeaders(
  secrets: readonly string[],
  id: string,
  attemptAt: Date,
  body: string,
): Record<"webhook-id" | "webhook-timestamp" | "webhook-signature", string> {
  const timestamp = Math.floor(attemptAt.getTime() / 1000);
  return {
    "webhook-id": id,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": signatureHeader(secrets, id, timestamp, body),
  };
}
