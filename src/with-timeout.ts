// A probe given a bound: a dependency that stops answering raises no error, so every check of
// one (readiness, the start-up preflight, a metrics scrape) races it against a timer.

/** What withTimeout rejects with at its bound: a probe's own failure is anything else. */
export class TimedOut extends Error {
  override name = "TimedOut";
}

/** Runs `probe`, giving up with TimedOut after timeoutMs; the timer never outlives the race. */
export async function withTimeout<T>(probe: () => Promise<T>, timeoutMs: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      probe(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new TimedOut(`${what} did not answer within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
