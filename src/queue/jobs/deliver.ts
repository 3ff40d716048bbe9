// The delivery job: load → send → record → reschedule. Postgres holds the schedule
// (attempt_count, next_attempt_at, status), so the job is idempotent and can be re-created
// from the row at any time: a delivered notification is skipped, a failed one fails the job
// again saying that nothing was sent, one whose next attempt is not due yet goes back to
// sleep until then. Between attempts the same job (jobId = notification id) waits in
// BullMQ's delayed set (moveToDelayed + DelayedError).
import { DelayedError, UnrecoverableError, type Job } from "bullmq";
import { createDeliveryStore, type DeliveryRow } from "../../db/queries/deliveries.ts";
import { failWithoutAttempt } from "../../db/queries/notifications.ts";
import type { Deps } from "../../deps.ts";
import { withRecipientsMasked } from "../../domain/recipient-mask.ts";
import type { NotificationMethod } from "../../domain/types.ts";
import { createRepeatedWarning } from "../../log-repeats.ts";
import type { DeliveryMetrics } from "../../metrics/delivery-metrics.ts";
import { recordPermanentFailure, type AlertHealthDeps } from "../../notify/alert-health.ts";
import { giveUpCause } from "../../notify/give-up-cause.ts";
import { createHostSlots, receiverOf } from "../../notify/host-slots.ts";
import type { BudgetedChannel } from "../../notify/channel-budget.ts";
import type { AttemptResult, Channels } from "../../notify/channels/index.ts";
import { createEmailBudget } from "../../notify/email-budget.ts";
import {
  attemptLogLevel,
  classifyOutcome,
  isDestinationsFault,
  marksAlertGone,
  parseRetryAfterMs,
  type DeploymentFault,
} from "../../notify/retry-policy.ts";
import { nextRetry, PROVIDER_RETRY_MS } from "../../notify/retry-steps.ts";
import { secretsInForce } from "../../notify/sign.ts";
import { createSmsBudget } from "../../notify/sms-budget.ts";
import { SETTINGS_OF_CHANNEL } from "../../notify/transports.ts";
import { settleDigestPayload } from "../../pipeline/cooldown-digest.ts";
import { enqueueDisabledNotice } from "../disabled-notices.ts";
import { DELIVERY_QUEUE, type DeliverJob } from "../names.ts";
import { wakeSteppedAside } from "../wake-stepped-aside.ts";
import { recordOwed, recordSent, type RecordSentDeps } from "./record-sent.ts";

/**
 * Jobs in flight per worker process. Webhooks mostly wait on the network and share batched
 * database statements, so many in flight is what keeps one process near 3,000/s
 * (npm run bench:delivery); SMTP servers and Twilio have limits of their own.
 */
export const DELIVERY_CONCURRENCY: Readonly<Record<NotificationMethod, number>> = {
  webhook: 200,
  email: 10,
  sms: 10,
};

/**
 * Attempts in flight to one webhook receiver (a registrable domain or an address, whatever the
 * port: receiverOf) per worker process and per owner, at the least: a tenth of the slots, all
 * that a receiver which hangs keeps (host-slots.ts); one that answers
 * within SLOW_ATTEMPT_MS grows its share up to every slot. 5 s, not 1 s: with 1 s, a burst to
 * one healthy receiver went 5-7 % slower than with no cap at all (npm run bench:delivery, two
 * alternating pairs; a busy worker's answers take longer than they seem, its event loop being
 * full), while with 5 s two pairs came out at or above the uncapped rate.
 */
export const WEBHOOK_ATTEMPTS_PER_RECEIVER = 20;
/**
 * Attempts in flight per worker process to one owner's receivers not known to answer within
 * SLOW_ATTEMPT_MS (slow, silent or new), together: a fifth of the slots. Without it each such
 * receiver had its floor, and one owner's alerts at eleven addresses that drop packets held all
 * 200 slots. Twice the floor, so an owner's two new or hanging receivers each still get theirs.
 */
const SLOW_RECEIVER_SHARES_PER_OWNER = 2;
const SLOW_ATTEMPT_MS = 5_000;
/**
 * How long a job over its cap steps aside from a receiver that answers quickly, at the least
 * (±50 %, so the waiting ones spread out). Longer behind a backlog to it, and while it is slow or
 * silent: host-slots.ts stepAside.
 */
const BUSY_RECEIVER_WAIT_MS = 1_000;
/**
 * The most a job steps aside at once. A backlog to a receiver that hangs takes hours to drain
 * (20 attempts per 15 s); its jobs come back every 4-5 minutes at most, not every second.
 */
const MAX_BUSY_RECEIVER_WAIT_MS = 5 * 60_000;

/** A job woken this close to its due time just runs (timer skew between Redis and us). */
const DUE_SLACK_MS = 50;
const STORED_ERROR_LIMIT = 2_000;

export type DeliverDeps = Pick<Deps, "config" | "logger" | "sql" | "redis" | "now" | "queues"> & {
  channels: Channels;
  random?: () => number;
  /** WEBHOOK_ATTEMPTS_PER_RECEIVER unless given (tests). */
  webhookAttemptsPerReceiver?: number;
  /** Counts each recorded attempt for the worker's /metrics. */
  deliveryMetrics?: DeliveryMetrics;
  /** How long a made attempt's record is retried (record-sent.ts RECORD_RETRY_MS unless given: tests). */
  recordRetryMs?: number;
  /** The wait between attempts while the provider cannot take messages (retry-steps.ts PROVIDER_RETRY_MS unless given: tests). */
  providerRetryMs?: number;
};

export function makeDeliverProcessor(
  deps: DeliverDeps,
  channel: NotificationMethod,
): (job: Job<DeliverJob>, token?: string) => Promise<void> {
  const random = deps.random ?? Math.random;
  const store = createDeliveryStore(deps.sql, (error) =>
    deps.logger.warn({ err: error }, "early SMS carrier statuses could not be applied; they expire unapplied"),
  );
  const alertHealth: AlertHealthDeps = {
    sql: deps.sql,
    logger: deps.logger,
    enqueueNotice: (notice) => enqueueDisabledNotice(deps.queues, deps.config.retryScheduleMs, notice),
  };
  // An outage of our SMTP server or Twilio fails every attempt on the channel: one line a minute.
  const warnProviderUnavailable = createRepeatedWarning(
    deps.logger,
    `the ${channel} provider cannot take messages now (unreachable, busy or failing); its notifications are retried every ${Math.round((deps.providerRetryMs ?? PROVIDER_RETRY_MS) / 1_000)} s and do not count against their alerts`,
  );
  const recording: RecordSentDeps = { store, logger: deps.logger, retryForMs: deps.recordRetryMs };
  const budgetDeps = { redis: deps.redis, prefix: deps.config.queuePrefix, logger: deps.logger };
  const spent = (channel: BudgetedChannel) => () => deps.deliveryMetrics?.budgetSpent(channel);
  const budgets = {
    sms: createSmsBudget({ ...budgetDeps, perHour: deps.config.smsPerCallerPerHour, onSpent: spent("sms") }),
    email: createEmailBudget({ ...budgetDeps, perHour: deps.config.emailPerCallerPerHour, onSpent: spent("email") }),
  };
  const floor = deps.webhookAttemptsPerReceiver ?? WEBHOOK_ATTEMPTS_PER_RECEIVER;
  const receivers = createHostSlots({
    floor,
    ceiling: DELIVERY_CONCURRENCY.webhook,
    slowSlotsPerOwner: SLOW_RECEIVER_SHARES_PER_OWNER * floor,
    slowMs: SLOW_ATTEMPT_MS,
    stepAsideMs: BUSY_RECEIVER_WAIT_MS,
    maxStepAsideMs: MAX_BUSY_RECEIVER_WAIT_MS,
    now: () => deps.now().getTime(),
    random,
  });
  return async (job, token) => {
    // An attempt an earlier run made but could not record is recorded, not made again; the row
    // then says what is left to do.
    const owed = await recordOwed(recording, job);
    if (owed) deps.deliveryMetrics?.attempted(owed.channel, owed.status);
    if (owed?.givenUp) deps.deliveryMetrics?.gaveUp(owed.channel, owed.givenUp);
    const row = await store.load(job.data.notificationId);
    // Gone (its alert deleted), or delivered by another run (a stalled job's second run, a
    // reconciler sweep that read the row still open): nothing is owed, a quiet no-op.
    if (!row || row.status === "delivered") return;
    if (row.status === "failed") {
      // A failed notification is sent again only once its owner reopens it (POST …/redeliver
      // makes it pending in Postgres first, then queues a job of its own); a run that finds it
      // failed does not send it. It ends failed, not completed: a completed job (and
      // outcome="completed" in the job-duration histogram) reads as "sent". Operators re-running failed jobs met this (Bull Board's Retry, which
      // admin.ts now refuses on the delivery queues; a script's job.retry(); a job duplicated
      // under another id). The other runs that meet a failed row are rare and were failures
      // already, so this adds no noise: BullMQ's retry of a run whose failing record committed
      // but whose answer was lost (it threw), a stalled run whose first run recorded the failure
      // before it could fail the job, a reconciler sweep that read the row open just before
      // its run failed it (it replaces that failed job with this one). Unrecoverable: BullMQ's
      // attempts would only say it again. No attempt is made or counted toward the alert.
      throw givenUp(
        row,
        `notification ${row.notificationId} had already failed; nothing was sent (its owner sends it again with POST /v1/notifications/${row.notificationId}/redeliver)`,
      );
    }

    const now = deps.now();
    if (row.nextAttemptAt && row.nextAttemptAt.getTime() > now.getTime() + DUE_SLACK_MS) {
      await sleepUntil(job, row.nextAttemptAt, token);
    }
    // Already-created notifications of an alert that was disabled are not sent; a test
    // notification is, so an owner can check the endpoint before re-enabling.
    if (row.alertStatus === "disabled" && row.payload.type !== "risk_alert.test") {
      await failWithoutAttempt(deps.sql, row.notificationId, now);
      // Failed, not completed, as for a failed row above: "completed" reads as "sent".
      throw givenUp(
        row,
        `notification ${row.notificationId} was not sent: its alert was disabled (its disabledReason says why; PATCH status active re-enables it)`,
      );
    }
    // A cooldown digest is built at its first attempt. A paused alert's is sent, as its other
    // owed notifications are: pausing stops new firings, and the events a digest tells of were
    // detected while the alert was active. Until 2026-11-28 it failed unsent, and a 1,000,000 SOL
    // send held back by a cooldown that a pause outlasted reached nobody (a risk analyst's review).
    if (row.payload.type === "risk_alert.suppressed") {
      const built = row.payload.data.suppressed === undefined ? await settleDigestPayload(deps.sql, row.notificationId, row.payload, deps.now()) : row.payload;
      if (!built) return; // gone with its alert meanwhile
      row.payload = built;
    }
    if (row.channel !== channel) {
      deps.logger.warn({ notificationId: row.notificationId, channel: row.channel, queue: channel }, "delivery job on another channel's queue");
    }

    // Counted per owner: another caller's endpoint that hangs at the same domain or address
    // costs its own caller's deliveries there, not this one's (host-slots.ts).
    const receiver = row.channel === "webhook" ? receiverOf(row.destination) : undefined;
    if (receiver !== undefined && !receivers.tryTake(row.owner, receiver)) {
      // The owner's share of its receiver has all its slots busy (or the owner's slow receivers
      // hold all theirs): step aside, no attempt made or counted, for as long as the jobs before
      // it and the receiver's pace say (a second or so for one that answers quickly; at least
      // its timeout, and longer behind a backlog, for one that hangs). In BullMQ's delayed set
      // meanwhile, like a retry: alive to the reconciler, whose sweep only doubts a job in none
      // of the queue's sets and lists.
      await sleepUntil(job, new Date(deps.now().getTime() + receivers.stepAside(row.owner, receiver, job.id)), token);
    }
    const attemptAt = deps.now();
    let result: AttemptResult | undefined;
    try {
      // An SMS or email over its owner's hourly budget is not sent: its attempt says so
      // (channel-budget.ts). A webhook has none: its receiver is its owner's own.
      const heldBack = row.channel === "webhook" ? undefined : await budgets[row.channel](row, attemptAt);
      result =
        heldBack ??
        (await deps.channels[row.channel].send({
          notificationId: row.notificationId,
          destination: row.destination,
          payload: row.payload,
          secrets: row.channel === "webhook" ? secretsInForce(row, attemptAt) : [],
          attemptAt,
        }));
    } finally {
      if (receiver !== undefined) {
        const callBack = receivers.give(row.owner, receiver, { durationMs: result?.durationMs ?? Infinity, answered: result?.statusCode !== undefined });
        // Quick again: the jobs that stepped aside at its slow pace come back now (host-slots.ts).
        if (callBack.length > 0) void wakeSteppedAside(deps.queues[DELIVERY_QUEUE[channel]], callBack);
      }
    }
    const outcome = decide(row, result, { scheduleMs: deps.config.retryScheduleMs, providerRetryMs: deps.providerRetryMs ?? PROVIDER_RETRY_MS, random }, deps.now());
    const level = attemptLogLevel(result);
    const fault = result.deploymentFault;
    // The attempt's record keeps the provider's words whole (the owner reads them); the log, the recipient masked.
    const loggedError = result.error === undefined ? undefined : forTheLog(row, result.error);
    if (level === "error" && fault) {
      deps.logger.error(
        { notificationId: row.notificationId, channel: row.channel, error: loggedError, status: outcome.status },
        fault === "unconfigured"
          ? `the ${row.channel} channel is not configured (set ${SETTING_TO_FIX[fault][row.channel]}); the notification is retried on its schedule`
          : `the ${row.channel} provider refused ${REFUSED[fault]} (${SETTING_TO_FIX[fault][row.channel]}); the notification is retried on its schedule`,
      );
    }
    if (level === "warn") {
      warnProviderUnavailable(
        { code: result.errorCode ?? `HTTP ${result.statusCode ?? result.smtpResponseCode}`, message: loggedError },
        { notificationId: row.notificationId, channel: row.channel, status: outcome.status },
      );
    }

    // Only the destination's failures count toward disabling the alert: not our own credentials,
    // sender or account permissions, nor an outage of our SMTP server or Twilio, however long.
    // The last attempt decides for a notification whose schedule ran out. Counted before the
    // attempt is recorded: recorded first, a failure of this statement (PostgreSQL away a moment)
    // left the notification failed, so the job's retry found it finished and the 410 never
    // disabled the alert. Counted first, a retry makes the attempt again and counts it again,
    // which changes nothing (the run's start is kept; a disabled alert is left alone, and its
    // notification then fails without an attempt). It counts only while the notification is
    // open: a stalled job's second run, failing after the first delivered it, counts nothing
    // (a 410 Gone included: alert-health.ts says why).
    if (outcome.status === "failed" && isDestinationsFault(result)) {
      await recordPermanentFailure(alertHealth, {
        alertId: row.alertId,
        notificationId: row.notificationId,
        gone: marksAlertGone(result),
        error: forTheLog(row, outcome.error ?? "failed"),
        now: deps.now(),
      });
    }
    // Whose a give-up is, so that the operator is paged for one of ours, not for a customer's
    // receiver (README, Monitoring); kept with the attempt for a later run that records it.
    const cause = outcome.status === "failed" ? giveUpCause(result) : undefined;
    // Made: its record is retried rather than the attempt made again (record-sent.ts).
    const recorded = await recordSent(recording, job, {
      channel: row.channel,
      notificationId: row.notificationId,
      alertId: row.alertId,
      destination: row.destination,
      at: attemptAt,
      durationMs: result.durationMs,
      statusCode: result.statusCode ?? result.smtpResponseCode ?? null,
      error: outcome.error?.slice(0, STORED_ERROR_LIMIT) ?? null,
      responseBody: result.responseBody ?? null,
      status: outcome.status,
      nextAttemptAt: outcome.nextAttemptAt,
      providerMessageId: result.providerMessageId ?? null,
      steps: outcome.steps,
      ...(cause && { givenUp: cause }),
    });
    if (!recorded) return; // another run finished it meanwhile
    if (result.providerUnavailable) deps.deliveryMetrics?.providerUnavailable(row.channel);
    // An outbox file or a log line is where an operator who opted in wants it, but it reached nobody.
    deps.deliveryMetrics?.attempted(row.channel, result.notSent && outcome.status === "delivered" ? "not_sent" : outcome.status);
    if (cause) deps.deliveryMetrics?.gaveUp(row.channel, cause);

    if (outcome.status === "retrying" && outcome.nextAttemptAt) {
      // Once parked, this run ends in a DelayedError, for which BullMQ emits neither completed
      // nor failed: the job-duration histogram hears of the attempt only from here.
      await sleepUntil(job, outcome.nextAttemptAt, token, () => deps.deliveryMetrics?.parkedForRetry(job));
    }
    if (outcome.status === "failed") {
      // The job fails too, so Bull Board shows it with the reason; BullMQ does not retry it.
      throw givenUp(row, outcome.error ?? "delivery failed");
    }
  };
}

/**
 * The error a notification given up for good fails its job with. Its `job failed` line names the
 * alert and, for a webhook, the receiver (a domain or an address, never the URL: its path and
 * query may carry the owner's secrets) beside the notification's id (run-workers.ts). Its
 * message, with the recipient masked, is also the job's failedReason and the first line of its
 * stacktrace, which Redis keeps for a week and Bull Board shows.
 */
function givenUp(row: DeliveryRow, message: string): UnrecoverableError {
  const receiver = row.channel === "webhook" ? receiverOf(row.destination) : undefined;
  return Object.assign(new UnrecoverableError(forTheLog(row, message)), { alertId: row.alertId, ...(receiver !== undefined && { receiver }) });
}

/**
 * An attempt's error as the log and the queue may show it: the provider's words often name the
 * email address or number it refused (domain/recipient-mask.ts). A webhook URL is no recipient
 * to mask: its errors say a status or a network error, never the URL (webhook.ts).
 */
function forTheLog(row: DeliveryRow, error: string): string {
  return withRecipientsMasked(error, row.channel === "webhook" ? undefined : row.destination);
}

/** What each kind of deployment fault refused, for the log. */
const REFUSED: Readonly<Record<DeploymentFault, string>> = {
  credentials: "this service's credentials",
  sender: "this service's sender",
  permission: "to send there on this service's account",
  encryption: "an encrypted connection for this service's login",
  unconfigured: "nothing: there is no provider",
};

/** Where an operator fixes what each channel's provider refused. */
const SETTING_TO_FIX: Readonly<Record<DeploymentFault, Readonly<Record<NotificationMethod, string>>>> = {
  credentials: { webhook: "none of ours", email: "SMTP_URL", sms: "TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN" },
  // "553 Sender address rejected: not owned by user": the address, or the login in SMTP_URL, is wrong.
  sender: { webhook: "none of ours", email: "EMAIL_FROM, or the login in SMTP_URL", sms: "TWILIO_FROM" },
  // "554 5.7.1 Relay access denied", "Email address is not verified" (a sandbox); Twilio 21608.
  permission: {
    webhook: "none of ours",
    email: "the SMTP server's relay rights for the login in SMTP_URL, or its sandbox (verified recipients only)",
    sms: "the Twilio account's trial status (a trial account sends only to verified numbers)",
  },
  // An smtp:// login off loopback waits for STARTTLS (email.ts loginNeedsTls): the server offered none, or its certificate failed.
  encryption: {
    webhook: "none of ours",
    email: "the SMTP server's STARTTLS and certificate, or SMTP_URL (smtps://; ?requireTLS=false sends the login in clear text)",
    sms: "none of ours",
  },
  // No SMTP_URL or TWILIO_*, and no opt-in to the outbox or the log (notify/transports.ts).
  unconfigured: { webhook: "none of ours", email: SETTINGS_OF_CHANNEL.email, sms: SETTINGS_OF_CHANNEL.sms },
};

type Decision = {
  status: "delivered" | "retrying" | "failed";
  nextAttemptAt: Date | null;
  error: string | undefined;
  /** The retry schedule's steps this attempt takes (retry-steps.ts). */
  steps: number;
};
type Retrying = { scheduleMs: readonly number[]; providerRetryMs: number; random: () => number };

function decide(row: DeliveryRow, result: AttemptResult, retrying: Retrying, now: Date): Decision {
  const verdict = classifyOutcome(result);
  if (verdict === "delivered") return { status: "delivered", nextAttemptAt: null, error: undefined, steps: 1 };
  const error = result.error ?? "not delivered";
  if (verdict === "permanent") return { status: "failed", nextAttemptAt: null, error, steps: 1 };
  const next = nextRetry({
    stepsTaken: row.attemptCount,
    scheduleMs: retrying.scheduleMs,
    providerUnavailable: result.providerUnavailable === true,
    providerRetryMs: retrying.providerRetryMs,
    random: retrying.random,
    retryAfterMs: parseRetryAfterMs(result.retryAfter, now.getTime()),
  });
  if (next === null) return { status: "failed", nextAttemptAt: null, error: `${error} (${gaveUp(row, retrying)})`, steps: 1 };
  return { status: "retrying", nextAttemptAt: new Date(now.getTime() + next.delayMs), error, steps: next.steps };
}

/**
 * Why a retried notification failed. Its attempts are counted in steps of the schedule
 * (retry-steps.ts), one per attempt only while no slot of the schedule is longer than a
 * provider's retry: then the count is said, as it always was; otherwise that the schedule ran out.
 */
function gaveUp(row: DeliveryRow, retrying: Retrying): string {
  if (retrying.scheduleMs.every((slot) => slot <= retrying.providerRetryMs)) return `gave up after ${row.attemptCount + 1} attempts`;
  return "gave up: its retry schedule (RETRY_SCHEDULE) ran out";
}

/**
 * Parks the job in BullMQ's delayed set until `at`; the worker must not complete or fail it.
 * `parked` runs once it is (a move that failed throws, and BullMQ reports that run as failed).
 */
async function sleepUntil(job: Job<DeliverJob>, at: Date, token: string | undefined, parked?: () => void): Promise<never> {
  await job.moveToDelayed(at.getTime(), token);
  parked?.();
  throw new DelayedError();
}
