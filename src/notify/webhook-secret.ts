import { randomBytes } from "node:crypto";

// Standard Webhooks secrets: `whsec_` and the base64 of the key bytes. 32 bytes is the
// HMAC-SHA256 block-size sweet spot and inside the 24–64 bytes the standard asks for.
const SECRET_BYTES = 32;
export const WEBHOOK_SECRET_PREFIX = "whsec_";

export function generateWebhookSecret(): string {
  return `${WEBHOOK_SECRET_PREFIX}${randomBytes(SECRET_BYTES).toString("base64")}`;
}
