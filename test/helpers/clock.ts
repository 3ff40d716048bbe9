// A clock for tests of counts kept per clock minute or hour. A run that crossed a boundary of
// real time saw its count start afresh mid-test (CI once found 4 requests left where 0 were
// owed). Within MARGIN_MS of the period's end the clock is moved ahead to the start of the
// next, so a test has at least that long before a boundary. It is never moved further than
// that: tokens minted on real time stay valid, and the clock still moves, so timeouts behave;
// and delays the app computes from its clock against the queue's real time (a retry's) stay
// within it (moved five minutes ahead, a retry 300 ms away waited five minutes: a CI clone run
// in the five minutes before an hour, 2026-11-28).
export const MARGIN_MS = 30_000;

export function clockClearOfBoundary(periodMs: number): () => Date {
  const left = periodMs - (Date.now() % periodMs);
  const ahead = left < MARGIN_MS ? left : 0;
  return () => new Date(Date.now() + ahead);
}

export const HOUR_MS = 3_600_000;
