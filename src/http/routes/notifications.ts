// Notifications seen from the API: send a test through an alert's channel, rotate a
// webhook secret, and read one notification with every delivery attempt. Scoped by the
// caller: another caller's alert or notification is a 404.
import { Type, type FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import {
  findNotification,
  findTestTarget,
  insertNotification,
  rotateWebhookSecret,
  type NotificationView,
  type TestTarget,
} from "../../db/queries/notifications.ts";
import type { Deps } from "../../deps.ts";
import type { NotificationMethod, NotificationPayload } from "../../domain/types.ts";
import { newId } from "../../ids.ts";
import { destinationShown, walletName } from "../../notify/render.ts";
import { channelsOff } from "../../notify/transports.ts";
import { PREVIOUS_SECRET_GRACE_MS } from "../../notify/sign.ts";
import { generateWebhookSecret } from "../../notify/webhook-secret.ts";
import { enqueueDeliveries } from "../../queue/deliveries.ts";
import { assertNoBody } from "../no-body.ts";
import { ProblemError, notFound } from "../problem.ts";
import { NO_STORE, described, errorResponses, idSchema, noStore, withLocation } from "../schemas.ts";
import { assertChannelOn } from "./channel-off.ts";
import { NotificationRef, summaryJson } from "./notification-schemas.ts";
import { QUOTA_TIMEOUT_MS, takeTestQuota } from "./test-quota.ts";
import { withTimeout } from "../../with-timeout.ts";

const AlertIdParams = Type.Object({ alertId: idSchema("alr", "alert") }, { additionalProperties: false });
const NotificationIdParams = Type.Object({ notificationId: idSchema("ntf", "notification") }, { additionalProperties: false });

const TestAccepted = Type.Object(
  { notificationId: Type.String({ description: "the notification (for webhooks, its webhook-id header)" }) },
  { description: "the test notification is queued; follow it at /v1/notifications/{notificationId}" },
);
const RotatedSecret = Type.Object({
  webhookSecret: Type.String({ description: "the new whsec_ secret; shown this once only" }),
  previousSecretExpiresAt: Type.String({ format: "date-time", description: "until then messages carry a signature with the old secret too" }),
});
const TAGS = ["notifications"];

export function notificationRoutes(deps: Deps): FastifyPluginAsyncTypebox {
  const offChannels = channelsOff(deps.config);
  return async (app) => {
    app.post(
      "/risk/alerts/:alertId/test",
      {
        // No deadline 503: a retry would send a second test and spend a second unit of quota.
        config: { scope: "alerts:write", deadline: false },
        schema: {
          tags: ["risk alerts"],
          summary: "Send a risk_alert.test notification through the alert's channel now",
          params: AlertIdParams,
          response: { 202: withLocation(TestAccepted, "the test notification is queued", "the notification's URL, /v1/notifications/{notificationId}"), ...errorResponses(400, 404, 409, 413, 415, 429) },
        },
      },
      async (request, reply) => {
        assertNoBody(request.body);
        const now = deps.now();
        const notificationId = newId("ntf", now.getTime());
        // One transaction holding the alert: deleted meanwhile, it is a 404 before the quota is
        // spent, and a delete that comes after waits for the notification (and takes it along).
        const target = await deps.sql.begin(async (tx) => {
          const found = await findTestTarget(tx, request.caller.sub, request.params.alertId);
          if (!found) throw notFound(`alert ${request.params.alertId}`);
          const destination = found.notificationMethod === "webhook" ? found.webhookUrl : found.recipient;
          if (!destination) throw new ProblemError("conflict", `alert ${found.alertId} has no ${found.notificationMethod} destination`);
          assertChannelOn(offChannels, found.notificationMethod, `a test of alert ${found.alertId}`);
          await takeTestQuota(deps.redis, deps.config.queuePrefix, request.caller.sub, deps.config.testNotificationsPerHour, now);
          await insertNotification(tx, {
            id: notificationId,
            alertId: found.alertId,
            eventId: null,
            channel: found.notificationMethod,
            destination,
            payload: testPayload(found, now),
            createdAt: now,
          });
          return found;
        });
        // The notification is committed and owed from here on: a failed enqueue leaves it pending
        // for the reconciler (within a sweep), as for any notification. Answering 503 instead
        // made a client that retried it send a second test (and spend a second of its quota).
        // Bounded as the quota's count is: this route has no deadline, and a Redis that stops
        // answering would hold the answer for ever.
        await withTimeout(() => enqueueDeliveries(deps.queues, [{ notificationId, channel: target.notificationMethod }]), QUOTA_TIMEOUT_MS, "Redis").catch(
          (error: unknown) => request.log.warn({ err: error, notificationId }, "test notification: enqueue failed; the reconciler will enqueue it"),
        );
        reply.code(202).header("location", `/v1/notifications/${notificationId}`);
        return { notificationId };
      },
    );

    app.post(
      "/risk/alerts/:alertId/rotate-secret",
      {
        config: { scope: "alerts:write" },
        schema: {
          tags: ["risk alerts"],
          summary: "Replace a webhook alert's signing secret; the old one keeps signing for 24 hours",
          params: AlertIdParams,
          response: { 200: noStore(described(RotatedSecret, "the new signing secret; the previous one still verifies for 24 hours")), ...errorResponses(400, 404, 409, 413, 415) },
        },
      },
      async (request, reply) => {
        assertNoBody(request.body);
        const { alertId } = request.params;
        const now = deps.now();
        const webhookSecret = generateWebhookSecret();
        const expiresAt = new Date(now.getTime() + PREVIOUS_SECRET_GRACE_MS);
        const result = await rotateWebhookSecret(deps.sql, request.caller.sub, alertId, webhookSecret, expiresAt, now);
        if (!result) throw notFound(`alert ${alertId}`);
        if (!result.rotated) throw new ProblemError("conflict", `alert ${alertId} is not a webhook alert: it has no secret to rotate`);
        reply.header("cache-control", NO_STORE);
        return { webhookSecret, previousSecretExpiresAt: expiresAt.toISOString() };
      },
    );

    app.get(
      "/notifications/:notificationId",
      {
        config: { scope: "alerts:read" },
        schema: {
          tags: TAGS,
          summary: "A notification's state and every delivery attempt, oldest first",
          params: NotificationIdParams,
          response: { 200: described(NotificationRef, "the notification, its attempts and (SMS) the carrier's word"), ...errorResponses(400, 404) },
        },
      },
      async (request) => {
        const row = await findNotification(deps.sql, request.caller.sub, request.params.notificationId);
        if (!row) throw notFound(`notification ${request.params.notificationId}`);
        return { ...summaryJson(row), attempts: row.attempts.map((attempt) => attemptJson(row.channel, attempt)) };
      },
    );
  };
}

/**
 * An attempt as its owner reads it. Its destination is shown as the owner's notice of a disabled
 * alert shows one (destinationShown): a webhook URL without its query, which often carries the
 * receiver's token. GET /v1/risk/alerts/{id} shows the current URL whole, since the owner edits
 * it there; an attempt is a record, kept after the owner replaced a URL (and its token), and
 * scheme, host and path say where it went. The database keeps the URL whole.
 */
function attemptJson(channel: NotificationMethod, attempt: NotificationView["attempts"][number]) {
  return {
    ...attempt,
    at: attempt.at.toISOString(),
    destination: attempt.destination === null ? null : destinationShown(channel, attempt.destination),
  };
}

/**
 * A test carries the alert's real settings (a large_transfer's token filter as `token`, the
 * threshold's unit) and the wallet's current risk, and says it is a test.
 */
function testPayload(target: TestTarget, now: Date): NotificationPayload {
  return {
    type: "risk_alert.test",
    timestamp: now.toISOString(),
    data: {
      alertId: target.alertId,
      walletId: target.walletId,
      address: target.address,
      alias: target.alias,
      condition: target.condition,
      threshold: target.threshold,
      ...(target.token === null ? {} : { token: target.token }),
      observed: null,
      riskScore: target.riskScore,
      riskFactors: target.riskFactors,
      reason: `Test notification for your ${target.condition} alert on ${walletName(target)}.`,
    },
  };
}
