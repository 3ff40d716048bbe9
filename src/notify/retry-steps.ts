// When a failed delivery is tried again, for the two kinds of failure that are retried: the
// recipient's (a webhook receiver down, a mailbox greylisted or full), which waits out
// RETRY_SCHEDULE's steps (5 s, 5 m, 30 m, 2 h, …) so that a receiver in trouble is not pressed,
// and our provider's (the SMTP server or Twilio unreachable, busy or failing:
// DeliveryOutcome.providerUnavailable), which is tried again every PROVIDER_RETRY_MS, so that
// mail and SMS flow within that long of the provider's return. Until 2026-11-28 a provider's
// outage waited on the recipient's schedule too: an alert raised at the start of a 40-minute SMTP
// outage went out 2 h 35 m later, at its next slot (an operator's review).
//
// One schedule serves both, kept as a count of steps in notifications.attempt_count: each slot
// of RETRY_SCHEDULE is cut into equal steps of at most PROVIDER_RETRY_MS (5 m into ten of 30 s,
// 5 s stays one). A provider's failure waits one step and takes it; the recipient's waits out
// the rest of the slot it is in, and takes all of its steps. So a recipient alone sees the
// schedule as before (each of its failures starts a slot and waits all of it), an outage alone
// is retried every step for as long as the whole schedule lasts (27 h 35 m by default, as
// before), and an outage uses up the recipient's schedule as time does: a recipient's failure
// after it waits what is left of the slot the outage reached. A schedule whose slots are all
// shorter than a step (tests) is tried exactly as it was.
import { spreadDelay } from "./retry-policy.ts";

/**
 * The most a notification waits between attempts while its provider cannot take it. 30 s: an
 * attempt to a provider that is down fails at once (refused) or within the channel's timeout, so
 * one attempt per notification per 30 s presses nobody, and per-channel concurrency (DELIVERY_CONCURRENCY)
 * bounds them all the same.
 */
export const PROVIDER_RETRY_MS = 30_000;

/** The next attempt: after `delayMs`, with `steps` more of the schedule taken; null when it is spent (→ failed). */
export type NextRetry = { delayMs: number; steps: number } | null;

export type RetryInput = {
  /** The schedule's steps already taken (notifications.attempt_count: 0 before the first attempt). */
  stepsTaken: number;
  scheduleMs: readonly number[];
  /** The failure was the provider's (DeliveryOutcome.providerUnavailable), not the recipient's. */
  providerUnavailable: boolean;
  /** The longest step (PROVIDER_RETRY_MS unless given: tests). */
  providerRetryMs?: number;
  /** 0 ≤ r < 1, for the ±20 % jitter. */
  random: () => number;
  /** A Retry-After, as milliseconds: clamped to [1 s, 24 h], the least the wait may be. */
  retryAfterMs?: number;
};

export function nextRetry(input: RetryInput): NextRetry {
  const stepMax = input.providerRetryMs ?? PROVIDER_RETRY_MS;
  let slotStart = 0;
  for (const slotMs of input.scheduleMs) {
    const stepsInSlot = Math.max(1, Math.ceil(slotMs / stepMax));
    const slotEnd = slotStart + stepsInSlot;
    if (input.stepsTaken < slotEnd) {
      const steps = input.providerUnavailable ? 1 : slotEnd - input.stepsTaken;
      const scheduled = (slotMs / stepsInSlot) * steps;
      return { delayMs: spreadDelay(scheduled, input.random, input.retryAfterMs), steps };
    }
    slotStart = slotEnd;
  }
  return null;
}
