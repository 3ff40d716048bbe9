// Redelivery of failed notifications by their owner: one by id, or an alert's failed ones made
// in a window (an outage of the owner's receiver that outlasted the retry schedule, a receiver
// that refused them while misconfigured). A redelivery reopens the same notification (same id,
// the same webhook-id, so a receiver deduplicates) with a fresh retry schedule, sent to the
// alert's destination as it is now, as retries are. Scoped by the caller: another caller's
// notification or alert is a 404. Postgres guards against doing it twice at once (each
// notification is reopened only while it is failed), Redis counts the hourly quota.
import { Type, type FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { FastifyBaseLogger } from "fastify";
import {
  failedInWindow,
  findRedeliveryAlert,
  findRedeliveryTarget,
  reopenFailed,
  restartFailureRun,
  type RedeliveryAlert,
  type RedeliveryTarget,
  type Reopened,
} from "../../db/queries/redeliveries.ts";
import type { Deps } from "../../deps.ts";
import type { NotificationStatus } from "../../domain/types.ts";
import { channelsOff } from "../../notify/transports.ts";
import { requeueDeliveries } from "../../queue/redeliveries.ts";
import { withTimeout } from "../../with-timeout.ts";
import { assertNoBody } from "../no-body.ts";
import { ProblemError, notFound } from "../problem.ts";
import { described, errorResponses, idSchema, withLocation } from "../schemas.ts";
import { assertChannelOn } from "./channel-off.ts";
import { windowEdges } from "./event-window.ts";
import { redeliveryOff, redeliveryQuota, type RedeliveryQuota } from "./redelivery-quota.ts";
import { QUOTA_TIMEOUT_MS } from "./test-quota.ts";

/** The most notifications one bulk request reopens; `more` says when its window holds others. */
export const MAX_REDELIVERED_PER_REQUEST = 1_000;

const TAGS = ["notifications"];
const NotificationIdParams = Type.Object({ notificationId: idSchema("ntf", "notification") }, { additionalProperties: false });
const AlertIdParams = Type.Object({ alertId: idSchema("alr", "alert") }, { additionalProperties: false });

const DATE_TIME_EXAMPLE = "2026-11-20T00:00:00Z";
const WindowBody = Type.Object(
  {
    since: Type.String({ format: "date-time", maxLength: 64, description: `ISO 8601 date-time (${DATE_TIME_EXAMPLE}): the notifications made at or after it` }),
    until: Type.Optional(
      Type.String({ format: "date-time", maxLength: 64, description: "ISO 8601 date-time: the notifications made before it (default: now)" }),
    ),
  },
  { additionalProperties: false },
);

const Redelivering = Type.Object(
  { notificationId: Type.String({ description: "the notification, reopened (for webhooks, still its webhook-id)" }) },
  { description: "the notification is queued again; follow it at /v1/notifications/{notificationId}" },
);
const RedeliveringMany = Type.Object({
  redelivered: Type.Integer({ minimum: 0, description: "how many failed notifications were reopened and queued" }),
  notificationIds: Type.Array(Type.String(), { description: "the notifications reopened, oldest first" }),
  more: Type.Boolean({
    description: `true when failed notifications of the window were left (past ${MAX_REDELIVERED_PER_REQUEST} per request, or past the hourly quota): send the same request again`,
  }),
});

export function redeliverRoutes(deps: Deps): FastifyPluginAsyncTypebox {
  const offChannels = channelsOff(deps.config);
  return async (app) => {
    app.post(
      "/notifications/:notificationId/redeliver",
      {
        config: { scope: "alerts:write" },
        schema: {
          tags: TAGS,
          summary: "Send a failed notification again: the same notification (and webhook-id), a fresh retry schedule, the alert's destination as it is now",
          params: NotificationIdParams,
          response: {
            202: withLocation(Redelivering, "the notification is reopened and queued", "the notification's URL, /v1/notifications/{notificationId}"),
            ...errorResponses(400, 404, 409, 413, 415),
          },
        },
      },
      async (request, reply) => {
        assertRedeliveryOn(deps);
        assertNoBody(request.body);
        const { notificationId } = request.params;
        const owner = request.caller.sub;
        const now = deps.now();
        const quota = redeliveryQuota(deps.redis, deps.config.queuePrefix, owner, deps.config.redeliveriesPerHour, now);
        const { reopened, alertId } = await givingBackOnRollback(quota, request.log, async (taken) => {
          return deps.sql.begin(async (tx) => {
            const target = await findRedeliveryTarget(tx, owner, notificationId);
            if (!target) throw notFound(`notification ${notificationId}`);
            if (target.status !== "failed") throw notFailed(notificationId, target.status);
            // Before the disabled alert's 409: re-enabling it would be refused too, for this reason.
            assertChannelOn(offChannels, target.channel, `notification ${notificationId}`);
            assertSendable(target);
            await taken.take(1);
            await restartFailureRun(tx, target.alertId, now);
            const [row] = await reopenFailed(tx, [notificationId], now);
            if (row) return { reopened: row, alertId: target.alertId };
            // Another request reopened it first (this one waited for its row lock, then found it pending).
            await taken.giveBack(1);
            const [current] = await tx<{ status: NotificationStatus }[]>`select status from notifications where id = ${notificationId}`;
            throw notFailed(notificationId, current?.status ?? "pending");
          });
        });
        await enqueue(deps, request.log, [reopened], owner, now);
        request.log.info({ notificationId, alertId, owner }, "notification redelivered at its owner's request");
        reply.code(202).header("location", `/v1/notifications/${notificationId}`);
        return { notificationId };
      },
    );

    app.post(
      "/risk/alerts/:alertId/notifications/redeliver",
      {
        config: { scope: "alerts:write" },
        schema: {
          operationId: "redeliverRiskAlertNotifications",
          tags: TAGS,
          summary: `Send again the alert's failed notifications made in a window (an outage), oldest first, at most ${MAX_REDELIVERED_PER_REQUEST} a request`,
          params: AlertIdParams,
          body: WindowBody,
          response: {
            202: described(RedeliveringMany, "the failed notifications of the window, reopened and queued (none, when it held none)"),
            ...errorResponses(400, 404, 409, 413, 415),
          },
        },
      },
      async (request, reply) => {
        assertRedeliveryOn(deps);
        const { alertId } = request.params;
        const owner = request.caller.sub;
        const now = deps.now();
        const { since, until } = redeliveryWindow(request.body, now);
        const quota = redeliveryQuota(deps.redis, deps.config.queuePrefix, owner, deps.config.redeliveriesPerHour, now);
        const outcome = await givingBackOnRollback(quota, request.log, async (taken) => {
          return deps.sql.begin(async (tx) => {
            const alert = await findRedeliveryAlert(tx, owner, alertId);
            if (!alert) throw notFound(`alert ${alertId}`);
            // The whole request, even for an empty window: none of its notifications could be sent.
            assertChannelOn(offChannels, alert.channel, `alert ${alertId}'s notifications`);
            assertRedeliverable(alert);
            // One more than the cap: whether the window holds more than this request reopens.
            const failed = await failedInWindow(tx, alertId, since, until, MAX_REDELIVERED_PER_REQUEST + 1);
            const wanted = Math.min(failed.length, MAX_REDELIVERED_PER_REQUEST);
            if (wanted === 0) return { reopened: [], more: false, unused: 0 };
            const granted = await taken.take(wanted);
            await restartFailureRun(tx, alertId, now);
            const reopened = await reopenFailed(tx, failed.slice(0, granted), now);
            return { reopened, more: failed.length > granted, unused: granted - reopened.length };
          });
        });
        // Committed: a Redis that fails now costs the caller some quota, not the redelivery.
        await quota.giveBack(outcome.unused).catch((error: unknown) => request.log.debug({ err: error }, "redelivery quota: could not give back the unused part"));
        await enqueue(deps, request.log, outcome.reopened, owner, now);
        const notificationIds = outcome.reopened.map((row) => row.notificationId);
        if (notificationIds.length > 0) {
          request.log.info(
            { alertId, owner, redelivered: notificationIds.length, since, until, first: notificationIds[0], last: notificationIds.at(-1) },
            "notifications redelivered at their owner's request",
          );
        }
        reply.code(202);
        return { redelivered: notificationIds.length, notificationIds, more: outcome.more };
      },
    );
  };
}

/**
 * Queues the reopened notifications. They are committed and owed from here on: a failed (or
 * hung) enqueue leaves them pending for the reconciler's next sweep, as a test notification's
 * would be, and the answer is still the 202.
 */
async function enqueue(deps: Deps, log: FastifyBaseLogger, reopened: readonly Reopened[], owner: string, now: Date): Promise<void> {
  const items = reopened.map((row) => ({ ...row, owner }));
  await withTimeout(() => requeueDeliveries(deps.queues, items, deps.redis, now.getTime()), QUOTA_TIMEOUT_MS, "Redis").catch((error: unknown) =>
    log.warn({ err: error, notifications: items.length }, "redelivery: enqueue failed; the reconciler will enqueue the reopened notifications"),
  );
}

/** REDELIVERIES_PER_HOUR=0: a 403 before anything else, so that "turned off" never reads as "nothing to do". */
function assertRedeliveryOn(deps: Deps): void {
  if (deps.config.redeliveriesPerHour === 0) throw redeliveryOff();
}

/**
 * Runs the transaction that takes quota. Should it fail after a grant (a statement error,
 * PostgreSQL gone), nothing was reopened: the grant is given back, else the caller lost units of
 * the hour to our failure. `taken.giveBack` is for what the transaction itself hands back.
 */
async function givingBackOnRollback<T>(
  quota: RedeliveryQuota,
  log: FastifyBaseLogger,
  transaction: (taken: Pick<RedeliveryQuota, "take" | "giveBack">) => Promise<T>,
): Promise<T> {
  let held = 0;
  const taken = {
    take: async (wanted: number) => {
      const granted = await quota.take(wanted);
      held += granted;
      return granted;
    },
    giveBack: async (unused: number) => {
      held -= unused;
      await quota.giveBack(unused);
    },
  };
  try {
    return await transaction(taken);
  } catch (error) {
    if (held > 0) {
      await quota.giveBack(held).catch((giveBackError: unknown) => log.debug({ err: giveBackError }, "redelivery quota: could not give back a rolled-back grant"));
    }
    throw error;
  }
}

/**
 * A disabled alert's notifications are failed unsent when they come due (queue/jobs/deliver.ts):
 * reopened, they would fail again at once, saying nothing new. Its test notifications are sent
 * (so that its owner can check the endpoint before re-enabling it), and so are redelivered: the
 * single route skips this for a test (assertSendable). A paused alert's are sent, its cooldown
 * digests too, as the notifications it still owed when it was paused are.
 */
function assertRedeliverable(alert: RedeliveryAlert): void {
  if (alert.alertStatus !== "disabled") return;
  throw new ProblemError(
    "conflict",
    `alert ${alert.alertId} is disabled (its disabledReason says why): re-enable it first (PATCH /v1/risk/alerts/${alert.alertId} with status active), then redeliver`,
  );
}

/**
 * The single route's rule, as the delivery job's (queue/jobs/deliver.ts), by the payload's type:
 * a test is sent whatever its alert's status; any other (a cooldown digest too) as
 * assertRedeliverable says. Not by its event: a digest has none either, and taken for a test, a
 * disabled alert's digest was reopened only to fail unsent.
 */
function assertSendable(target: RedeliveryTarget): void {
  if (target.type === "risk_alert.test") return;
  assertRedeliverable(target);
}

const STATUS_HINTS: Readonly<Record<Exclude<NotificationStatus, "failed">, string>> = {
  pending: "it is being sent (follow it with GET)",
  retrying: "it is being sent, and retried on its schedule (follow it with GET)",
  delivered: "it was delivered",
};

function notFailed(notificationId: string, status: NotificationStatus): ProblemError {
  const hint = status === "failed" ? "" : `: ${STATUS_HINTS[status]}`;
  return new ProblemError("conflict", `notification ${notificationId} is ${status}, and only a failed notification can be redelivered${hint}`);
}

/** The window of a bulk request (until: now when not given), as dates. */
function redeliveryWindow(body: { since: string; until?: string }, now: Date): { since: Date; until: Date } {
  const { since, until } = windowEdges("body", body, now.getTime());
  return { since: new Date(since!), until: new Date(until!) };
}
