// The demo runs for as long as it is left running, and its background feed posts every few
// seconds: a token minted once expired after its TTL, and every post after that was refused
// with a 401 while the process looked healthy. So the token is minted again once half of its
// lifetime has passed (the half left covers requests already on their way).
export type TokenSource = () => Promise<string>;

export function renewingToken(mint: () => Promise<string>, ttlSeconds: number, now: () => number = Date.now): TokenSource {
  let current: { token: Promise<string>; renewAt: number } | undefined;
  return () => {
    if (!current || now() >= current.renewAt) {
      const token = mint();
      current = { token, renewAt: now() + (ttlSeconds * 1000) / 2 };
      // A failed mint is not kept: the next call tries again.
      token.catch(() => (current = undefined));
    }
    return current.token;
  };
}
