// The simulator's bearer token. A feed left running outlives any one token: the API refuses a
// token past its exp and, with JWT_MAX_TOKEN_AGE, one issued longer ago than that, however far
// its exp. A token the simulator mints itself is minted again half-way to the earlier of the
// two (the half left covers requests already on their way), and once more after a 401. A token
// the user gave cannot be renewed: its refusal ends the run.
export type TokenSource = {
  /** The token to send with the next request. */
  current: () => Promise<string>;
  /** After a 401: true once a new token is in place, false when there is none to be had. */
  renew: () => Promise<boolean>;
};

export function fixedToken(token: string): TokenSource {
  return { current: () => Promise.resolve(token), renew: () => Promise.resolve(false) };
}

/** Half of the time a minted token stays acceptable: the sooner of its ttl and the API's JWT_MAX_TOKEN_AGE. */
export function renewEveryMs(ttlMs: number, maxTokenAgeMs: number | undefined): number {
  return Math.min(ttlMs, maxTokenAgeMs ?? Infinity) / 2;
}

export function mintedTokens(mint: () => Promise<string>, renewAfterMs: number, now: () => number = Date.now): TokenSource {
  let held: { token: Promise<string>; renewAt: number } | undefined;
  const mintNow = () => {
    const token = mint();
    const minted = { token, renewAt: now() + renewAfterMs };
    held = minted;
    // A failed mint is not kept: the next call tries again.
    token.catch(() => {
      if (held === minted) held = undefined;
    });
    return minted;
  };
  let renewing: Promise<boolean> | undefined;
  return {
    current: () => (!held || now() >= held.renewAt ? mintNow() : held).token,
    // Requests in flight together meet the same 401: one new token serves them all.
    renew: () =>
      (renewing ??= mintNow()
        .token.then(() => true)
        .finally(() => (renewing = undefined))),
  };
}
