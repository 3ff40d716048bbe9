// HTTP Basic authentication for the operator surfaces (Bull Board, /metrics), compared in
// constant time: both sides are hashed to equal-length digests first, and the user and every
// accepted password are all compared whatever the other comparisons said.
import { createHash, timingSafeEqual } from "node:crypto";

/**
 * previousPassword: ADMIN_PASSWORD_PREVIOUS, accepted beside the password while it is rotated:
 * Prometheus holds one password per scrape job, and during a rolling change the processes not
 * yet restarted would refuse the new one (or the restarted ones the old), leaving gaps in every
 * panel and alert rule.
 */
export type AdminCredentials = Readonly<{ user: string | undefined; password: string | undefined; previousPassword?: string | undefined }>;

export const BASIC_CHALLENGE = 'Basic realm="wallet-alerts admin", charset="UTF-8"';

/** False when no admin user is configured: the operator surfaces are then switched off. */
export function adminEnabled(admin: AdminCredentials): admin is { user: string; password: string; previousPassword?: string | undefined } {
  return Boolean(admin.user && admin.password);
}

/** A checker for `Authorization` header values; always false when admin is not configured. */
export function createBasicAuthCheck(admin: AdminCredentials): (authorization: string | undefined) => boolean {
  if (!adminEnabled(admin)) return () => false;
  const expectedUser = digest(admin.user);
  const expectedPasswords = [admin.password, admin.previousPassword].filter((password) => password !== undefined).map(digest);
  return (authorization) => {
    const match = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(authorization ?? "");
    if (!match) return false;
    const decoded = Buffer.from(match[1]!, "base64").toString("utf8");
    const colon = decoded.indexOf(":");
    if (colon < 0) return false;
    const userMatches = timingSafeEqual(digest(decoded.slice(0, colon)), expectedUser);
    const givenPassword = digest(decoded.slice(colon + 1));
    // Every password compared (map, not some): which one matched takes no less time than none.
    const passwordMatches = expectedPasswords.map((expected) => timingSafeEqual(givenPassword, expected)).includes(true);
    return userMatches && passwordMatches;
  };
}

function digest(value: string): Buffer {
  return createHash("sha256").update(value, "utf8").digest();
}
