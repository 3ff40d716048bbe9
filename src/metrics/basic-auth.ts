// HTTP Basic authentication for the operator surfaces (Bull Board, /metrics), compared in
// constant time: both sides are hashed to equal-length digests first, and the user and the
// password are both compared whatever the first comparison said.
import { createHash, timingSafeEqual } from "node:crypto";

export type AdminCredentials = Readonly<{ user: string | undefined; password: string | undefined }>;

export const BASIC_CHALLENGE = 'Basic realm="wallet-alerts admin", charset="UTF-8"';

/** False when no admin user is configured: the operator surfaces are then switched off. */
export function adminEnabled(admin: AdminCredentials): admin is { user: string; password: string } {
  return Boolean(admin.user && admin.password);
}

/** A checker for `Authorization` header values; always false when admin is not configured. */
export function createBasicAuthCheck(admin: AdminCredentials): (authorization: string | undefined) => boolean {
  if (!adminEnabled(admin)) return () => false;
  const expectedUser = digest(admin.user);
  const expectedPassword = digest(admin.password);
  return (authorization) => {
    const match = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(authorization ?? "");
    if (!match) return false;
    const decoded = Buffer.from(match[1]!, "base64").toString("utf8");
    const colon = decoded.indexOf(":");
    if (colon < 0) return false;
    const userMatches = timingSafeEqual(digest(decoded.slice(0, colon)), expectedUser);
    const passwordMatches = timingSafeEqual(digest(decoded.slice(colon + 1)), expectedPassword);
    return userMatches && passwordMatches;
  };
}

function digest(value: string): Buffer {
  return createHash("sha256").update(value, "utf8").digest();
}
