// Response schemas of a notification as the API shows it: one with its attempts
// (GET /v1/notifications/{id}), and an alert's list without them
// (GET /v1/risk/alerts/{id}/notifications), each item the same fields but the attempts.
import { Type } from "@fastify/type-provider-typebox";
import type { NotificationSummary } from "../../db/queries/notifications.ts";
import { NOTIFICATION_METHODS, NOTIFICATION_STATUSES, type NotificationPayload } from "../../domain/types.ts";
import { idSchema, isoDate, queryInteger, refTo } from "../schemas.ts";
import { EVENTS_LIMIT } from "./alert-schemas.ts";

// A record, so that a new type of payload fails to compile here until it is listed.
const TYPES: Record<NotificationPayload["type"], null> = { "risk_alert.triggered": null, "risk_alert.test": null, "risk_alert.suppressed": null };
export const NOTIFICATION_TYPES = Object.keys(TYPES) as Array<NotificationPayload["type"]>;

/** As the events list's: an alert's notifications are as many as its events and more. */
export const NOTIFICATIONS_LIMIT = EVENTS_LIMIT;

const NotificationType = Type.Enum(NOTIFICATION_TYPES, {
  description: "the payload's type: risk_alert.triggered (an event fired), risk_alert.test (POST …/test), risk_alert.suppressed (a cooldown digest)",
});

const summaryProperties = {
  notificationId: Type.String({ description: "for webhooks, its webhook-id header" }),
  alertId: Type.String(),
  eventId: Type.Union([Type.String(), Type.Null()], { description: "the event it tells of; null for a test notification and a cooldown digest (type tells them apart)" }),
  type: NotificationType,
  channel: Type.Enum(NOTIFICATION_METHODS),
  status: Type.Enum(NOTIFICATION_STATUSES),
  createdAt: Type.String({ format: "date-time" }),
  deliveredAt: Type.Union([Type.String({ format: "date-time" }), Type.Null()]),
  attemptCount: Type.Integer({ minimum: 0, description: "delivery attempts made, a redelivery's included" }),
  nextAttemptAt: Type.Union([Type.String({ format: "date-time" }), Type.Null()], {
    description: "when the next attempt is due: a retrying notification's retry, a cooldown digest's cooldown end; null when it is due at once or finished",
  }),
  carrier: Type.Union(
    [
      Type.Object({
        status: Type.String({
          description:
            "Twilio's latest MessageStatus: accepted, scheduled, queued, sending or sent on the way; delivered, undelivered, failed, canceled… (final: never replaced by a status that arrives after it)",
        }),
        errorCode: Type.Union([Type.Integer(), Type.Null()], { description: "Twilio's error code with undelivered or failed: 30003 unreachable handset, 30004 blocked, 30005 unknown destination, 30006 landline or unreachable carrier, 30007 filtered, 30008 unknown" }),
        updatedAt: Type.String({ format: "date-time", description: "when the latest status came" }),
      }),
      Type.Null(),
    ],
    { description: "SMS only: what the carrier did with the message, from Twilio's status callbacks (TWILIO_STATUS_CALLBACK_URL); null until one came, and for email and webhooks" },
  ),
};

// Named schemas: components.schemas in the OpenAPI document (Notification, NotificationSummary), a $ref where a route
// uses them (NotificationRef below; refTo, schema-components.ts).
export const NotificationSchema = Type.Object(
  {
    ...summaryProperties,
    attempts: Type.Array(
      Type.Object({
        at: Type.String({ format: "date-time" }),
        durationMs: Type.Integer(),
        statusCode: Type.Union([Type.Integer(), Type.Null()], { description: "HTTP status (webhook, Twilio) or SMTP reply code" }),
        error: Type.Union([Type.String(), Type.Null()]),
        destination: Type.Union([Type.String(), Type.Null()], {
          description:
            "where this attempt went, as the alert said then (an owner's PATCH moves the attempts after it, never the ones before): the email address or phone number; a webhook URL as scheme, host and path, without its query (which often carries the receiver's token); null for attempts made before the service recorded it",
        }),
      }),
    ),
  },
  { $id: "Notification", description: "a notification of an alert (a firing, a test or a cooldown digest), its delivery attempts and (SMS) the carrier's word" },
);
export const NotificationRef = refTo(NotificationSchema);

export const NotificationSummarySchema = Type.Object(summaryProperties, {
  $id: "NotificationSummary",
  description: "a notification as an alert's list shows it: a Notification's fields without its attempts",
});

export const NotificationListSchema = Type.Object({
  notifications: Type.Array(refTo(NotificationSummarySchema), {
    description: "oldest first, in the order they were committed; each as GET /v1/notifications/{notificationId} shows it, without its attempts",
  }),
  hasMore: Type.Boolean({ description: "whether the list goes on past this page now; to read on (or to poll for new ones), set after to the notificationId of the last one" }),
});

export const NotificationListQuery = Type.Object(
  {
    limit: queryInteger({ ...NOTIFICATIONS_LIMIT, description: "notifications to return" }),
    after: Type.Optional(
      idSchema("ntf", "only the notifications listed after this one (newer; the cursor a poller resumes from): the notificationId of the last one received, a notification"),
    ),
    status: Type.Optional(Type.Enum(NOTIFICATION_STATUSES, { description: "only the notifications with this status" })),
    type: Type.Optional(Type.Enum(NOTIFICATION_TYPES, { description: "only the notifications of this type" })),
  },
  { additionalProperties: false },
);

export function summaryJson(summary: NotificationSummary) {
  return {
    ...summary,
    createdAt: summary.createdAt.toISOString(),
    deliveredAt: isoDate(summary.deliveredAt),
    nextAttemptAt: isoDate(summary.nextAttemptAt),
    carrier: summary.carrier && { ...summary.carrier, updatedAt: summary.carrier.updatedAt.toISOString() },
  };
}
