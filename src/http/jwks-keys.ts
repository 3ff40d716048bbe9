// Keys from the identity provider's JWKS (JWT_JWKS_URL), through jose's remote key set: kept
// 10 minutes, fetched again when a token names a key it lacks. A JWKS that cannot be fetched
// (the provider down, a timeout, a 5xx, a document that is no key set) says nothing about the
// token: without this, jose's fetch error became a 401 "the token is malformed" for every
// caller within 10 minutes of a provider outage, and clients threw good tokens away.
// So, while the JWKS cannot be fetched, the keys last fetched keep verifying tokens for up to
// STALE_KEYS_MS (a key the provider withdraws meanwhile is honoured that much longer); past
// that, or before any fetch succeeded, verification fails with KeySourceUnavailable (503).
import {
  createLocalJWKSet,
  createRemoteJWKSet,
  errors as joseErrors,
  type JSONWebKeySet,
  type JWTVerifyGetKey,
} from "jose";

export const STALE_KEYS_MS = 60 * 60_000;

export class KeySourceUnavailable extends Error {
  constructor(cause: unknown) {
    super("the JWKS cannot be fetched", { cause });
  }
}

export function createJwksKeySource(url: URL, now: () => number = Date.now): JWTVerifyGetKey {
  const remote = createRemoteJWKSet(url);
  let lastGood: { keys: JSONWebKeySet; at: number; local?: JWTVerifyGetKey } | undefined;
  return async (header, token) => {
    try {
      const key = await remote(header, token);
      const keys = remote.jwks();
      if (keys) lastGood = { keys, at: now() };
      return key;
    } catch (error) {
      if (!isKeySourceFailure(error)) throw error;
      if (!lastGood || now() - lastGood.at > STALE_KEYS_MS) throw new KeySourceUnavailable(error);
      lastGood.local ??= createLocalJWKSet(lastGood.keys);
      return lastGood.local(header, token);
    }
  };
}

/** A failure to get the key set, as opposed to a verdict on the token (no matching key, say). */
function isKeySourceFailure(error: unknown): boolean {
  // Network errors reach us as they are (a TypeError from fetch); jose's own fetch failures are
  // a timeout, a generic JOSEError (not 200, not JSON) or an invalid key set.
  if (!(error instanceof joseErrors.JOSEError)) return true;
  return error instanceof joseErrors.JWKSTimeout || error instanceof joseErrors.JWKSInvalid || error.code === "ERR_JOSE_GENERIC";
}
