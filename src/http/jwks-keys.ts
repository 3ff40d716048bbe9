// Keys from the identity provider's JWKS (JWT_JWKS_URL). jose fetches the key set (its timeout,
// its checks of the answer); this module decides when, on its own clock (`now`):
// - The keys are kept KEYS_MAX_AGE_MS (10 minutes, jose's default), then fetched again.
// - A token naming a key the set lacks makes it fetched again: the provider may have just added
//   the key and signed with it (a key rollover). Only a set fetched after the token came is
//   believed to lack it (401 "no key matches the token"). With jose's own 30 s cooldown between
//   such fetches, a token signed with a key published a moment before was a 401 for up to 30 s,
//   and its client threw a good token away; now, while a fetch may not be made, it is
//   KeySetCoolingDown (503 with Retry-After: the seconds until one may).
// - At most one fetch is made per REFETCH_COOLDOWN_MS, failed or not, whatever comes: a flood
//   of tokens naming made-up keys costs the provider one request per 5 s per process.
// - A JWKS that cannot be fetched (the provider down, a timeout, a 5xx, a document that is no key
//   set) says nothing about the token: without this, jose's fetch error became a 401 "the token
//   is malformed" for every caller within 10 minutes of a provider outage. So, while it cannot be
//   fetched, the keys last fetched keep verifying tokens for up to STALE_KEYS_MS from that fetch
//   (a key the provider withdraws meanwhile is honoured that much longer); past that, before any
//   fetch succeeded, or for a key they lack, verification fails with KeySourceUnavailable (503).
import { createLocalJWKSet, createRemoteJWKSet, errors as joseErrors, type JWTVerifyGetKey } from "jose";

export const KEYS_MAX_AGE_MS = 10 * 60_000;
export const REFETCH_COOLDOWN_MS = 5_000;
export const STALE_KEYS_MS = 60 * 60_000;

export class KeySourceUnavailable extends Error {
  constructor(cause: unknown) {
    super("the JWKS cannot be fetched", { cause });
  }
}

/** The token names a key the set fetched so far lacks, and the set may be fetched again only in `retryAfterSeconds`. */
export class KeySetCoolingDown extends Error {
  constructor(readonly retryAfterSeconds: number) {
    super(`the JWKS may be fetched again in ${retryAfterSeconds} s`);
  }
}

type KeySet = { keys: JWTVerifyGetKey; sentAt: number };

export function createJwksKeySource(url: URL, now: () => number = Date.now): JWTVerifyGetKey {
  // Used for its fetch only (reload), never as a key resolver: that would fetch on jose's clock.
  const remote = createRemoteJWKSet(url);
  let fetched: KeySet | undefined;
  let lastFailure: unknown;
  let lastAttemptAt = -Infinity;
  let inFlight: Promise<KeySet> | undefined;

  /** The key set fetched now, or by the fetch under way (which a caller joins at no cost). */
  const fetchKeys = (): Promise<KeySet> =>
    (inFlight ??= (async () => {
      // When the request left: the provider's set is at least that recent.
      const sentAt = (lastAttemptAt = now());
      try {
        await remote.reload();
        fetched = { keys: createLocalJWKSet(remote.jwks()!), sentAt };
        return fetched;
      } catch (error) {
        lastFailure = error;
        throw error;
      } finally {
        inFlight = undefined;
      }
    })());
  const mayFetch = () => inFlight !== undefined || now() - lastAttemptAt >= REFETCH_COOLDOWN_MS;

  return async (header, token) => {
    const arrivedAt = now();
    if ((!fetched || arrivedAt - fetched.sentAt >= KEYS_MAX_AGE_MS) && mayFetch()) {
      // A failure is not this token's: the keys last fetched serve, within STALE_KEYS_MS.
      await fetchKeys().catch(() => {});
    }
    let keySet = fetched && now() - fetched.sentAt <= STALE_KEYS_MS ? fetched : undefined;
    if (!keySet) throw new KeySourceUnavailable(lastFailure);
    for (;;) {
      try {
        return await keySet.keys(header, token);
      } catch (error) {
        if (!(error instanceof joseErrors.JWKSNoMatchingKey) || keySet.sentAt >= arrivedAt) throw error;
      }
      if (!mayFetch()) throw new KeySetCoolingDown(Math.max(1, Math.ceil((lastAttemptAt + REFETCH_COOLDOWN_MS - now()) / 1000)));
      try {
        keySet = await fetchKeys();
      } catch (error) {
        // The set that could not be fetched may hold the key: not the token's fault either.
        throw new KeySourceUnavailable(error);
      }
    }
  };
}
