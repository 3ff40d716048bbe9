// Request and response schemas of /v1/risk/alerts. Bodies are strict: unknown fields are
// errors and numbers must be JSON numbers. Rules that span fields (threshold per
// condition, recipient per method, the webhook URL's destination) live in alert-input.ts.
import { Type } from "@fastify/type-provider-typebox";
import type { AlertEventRow } from "../../db/queries/events.ts";
import { MAX_COOLDOWN_SECONDS, MAX_TOKEN_FILTER_LENGTH } from "../../domain/alert-settings.ts";
import { WINDOW_SECONDS } from "../../domain/conditions/large-transfer-window.ts";
import { WELL_KNOWN_TOKENS } from "../../domain/tokens.ts";
import { ALERT_STATUSES, CONDITIONS, NOTIFICATION_METHODS } from "../../domain/types.ts";
import { MAX_WEBHOOK_URL_LENGTH } from "../../notify/ssrf.ts";
import { idSchema, problemResponses, queryInteger, refTo, textSchema, wholeNumber } from "../schemas.ts";

export const PAGE = { min: 1, max: 1_000_000, default: 1 } as const;
export const PAGE_LIMIT = { min: 1, max: 100, default: 25 } as const;
export const EVENTS_LIMIT = { min: 1, max: 500, default: 50 } as const;
export const EVENTS_OFFSET = {
  min: 0,
  max: 100_000,
  default: 0,
  pastMax: "to read further, set after to the eventId of the last event received (offset then counts from there)",
} as const;

const nullable = <T extends ReturnType<typeof Type.String>>(schema: T) => Type.Union([schema, Type.Null()]);

const Condition = Type.Enum(CONDITIONS, { description: "what the alert watches for" });
const NotificationMethod = Type.Enum(NOTIFICATION_METHODS, { description: "how the alert notifies" });
const Threshold = Type.Number({
  description:
    "large_transfer: amount in the transaction's token units (required); suspicious_counterparty: counterparty " +
    "risk 0–100 (default 75); unusual_activity: multiple of the hourly baseline (default 5); " +
    "risk_score_increase: whole points above the baseline, 1–100 (default 10)",
});
const WebhookUrl = textSchema({
  minLength: 1,
  maxLength: MAX_WEBHOOK_URL_LENGTH,
  description: "https URL that receives signed notifications (webhook alerts only)",
});
const Recipient = textSchema({
  minLength: 1,
  maxLength: 254,
  description: "email address (email alerts) or E.164 phone number (sms alerts); defaults to the token's email / phone_number claim",
});
const CooldownSeconds = wholeNumber({
  minimum: 0,
  maximum: MAX_COOLDOWN_SECONDS,
  description: "seconds after a notification during which further firings are recorded but not sent (default 0)",
});

const WindowSeconds = wholeNumber({
  minimum: WINDOW_SECONDS.min,
  maximum: WINDOW_SECONDS.max,
  description:
    "large_transfer with a token only: judge what the wallet sent of the token summed over this trailing window (seconds), not each transaction alone: " +
    "fires on the send that brings the sum of the sends in the window ending at it to the threshold from below, once until the sum has fallen below again; " +
    "a single send at or above the threshold, and a received transfer at or above it, fire as without a window. Set at creation only",
});

/**
 * A create's 409, code `conflict` either way: its Idempotency-Key made another alert (Location
 * names it), or the caller has as many alerts as the caps allow (no Location: no one alert is
 * in the way; `limit` and the detail name the cap).
 */
export const CreateConflictResponse = {
  409: {
    ...problemResponses(409)[409],
    description:
      "RFC 9457 problem details, code conflict. With Location: the Idempotency-Key was used for a different request, more than a day ago, or before a secret rotation (Location names the alert it made). " +
      "Without Location, and with the extension member limit ({ setting, max }): the caller has as many alerts on the wallet (MAX_ALERTS_PER_WALLET), or in all (MAX_ALERTS_PER_CALLER), as the service allows, of any status; " +
      "limit.setting names the cap and the detail says what to do: delete or change an alert instead (retrying does not help). The Idempotency-Key's 409 has no limit",
    headers: { location: { type: "string", description: "the URL of the alert that the Idempotency-Key made (absent when a cap refused the create)" } },
  },
};

export const AlertIdParams = Type.Object({ alertId: idSchema("alr", "alert") }, { additionalProperties: false });

export const CreateAlertBody = Type.Object(
  {
    walletId: idSchema("wal", "wallet"),
    condition: Condition,
    threshold: Type.Optional(Threshold),
    notificationMethod: NotificationMethod,
    webhookUrl: Type.Optional(WebhookUrl),
    recipient: Type.Optional(Recipient),
    cooldownSeconds: Type.Optional(CooldownSeconds),
    token: Type.Optional(
      textSchema({
        minLength: 1,
        maxLength: MAX_TOKEN_FILTER_LENGTH,
        description:
          `large_transfer only: fire only for this token: a well-known symbol (${WELL_KNOWN_TOKENS.map((t) => t.symbol).join(", ")}; ` +
          "any letter case; WSOL is SOL) or a mint address; any other token by its mint (its symbol is whatever its creator chose). Trimmed",
      }),
    ),
    windowSeconds: Type.Optional(WindowSeconds),
    ignoreOwnWallets: Type.Optional(
      Type.Boolean({
        description:
          "large_transfer only (default false): a transfer whose other side is a wallet you also track (your own: a sweep from your hot wallet to your cold one) " +
          "is not judged by this alert; in a transaction of several transfers, those to and from your wallets are left out of the total and the rest is judged, " +
          "and with windowSeconds the sends to your wallets are not summed. Your wallets as tracked when the transaction is evaluated. Set at creation only",
      }),
    ),
  },
  { additionalProperties: false },
);

export const UpdateAlertBody = Type.Object(
  {
    status: Type.Optional(
      Type.Enum(["active", "paused"], { description: "active (also re-enables a disabled alert) or paused" }),
    ),
    threshold: Type.Optional(Threshold),
    cooldownSeconds: Type.Optional(CooldownSeconds),
    recipient: Type.Optional(Recipient),
    webhookUrl: Type.Optional(WebhookUrl),
  },
  { additionalProperties: false, minProperties: 1, description: "change at least one of status, threshold, cooldownSeconds, recipient, webhookUrl" },
);

export const ListAlertsQuery = Type.Object(
  {
    page: queryInteger({ ...PAGE, description: "page number; leave it out with after" }),
    limit: queryInteger({ ...PAGE_LIMIT, description: "alerts per page" }),
    after: Type.Optional(
      idSchema(
        "alr",
        "extension, with page left out: only the alerts listed after (older than) this one, a cursor that creates and deletes between pages do not move: " +
          "the last alert received (deleted since or not), by its alert",
      ),
    ),
    walletId: Type.Optional(idSchema("wal", "only alerts of this wallet")),
    status: Type.Optional(Type.Enum(ALERT_STATUSES, { description: "only alerts with this status" })),
  },
  { additionalProperties: false },
);

export const EventsQuery = Type.Object(
  {
    limit: queryInteger({ ...EVENTS_LIMIT, description: "events to return" }),
    offset: queryInteger({ ...EVENTS_OFFSET, description: "events to skip" }),
    after: Type.Optional(
      idSchema("evt", "only the events listed after this one (older; a cursor that pages past offset's bound): the eventId of the last event received"),
    ),
    since: Type.Optional(
      Type.String({ format: "date-time", maxLength: 64, description: "ISO 8601 date-time (2026-03-01T00:00:00Z): only the events with createdAt at or after it" }),
    ),
    until: Type.Optional(
      Type.String({ format: "date-time", maxLength: 64, description: "ISO 8601 date-time: only the events with createdAt before it; later than since" }),
    ),
  },
  { additionalProperties: false },
);

const alertProperties = {
  alertId: Type.String(),
  walletId: Type.String(),
  condition: Condition,
  status: Type.Enum(ALERT_STATUSES, { description: "active, paused, or disabled (delivery kept failing; see disabledReason)" }),
  createdAt: Type.String({ format: "date-time" }),
  threshold: Type.Number(),
  notificationMethod: NotificationMethod,
  webhookUrl: nullable(Type.String()),
  recipient: nullable(Type.String()),
  cooldownSeconds: Type.Integer(),
  token: nullable(Type.String()),
  windowSeconds: Type.Union([Type.Integer(), Type.Null()], {
    description: "large_transfer: the trailing window (seconds) its sends of the token are summed over; null: each transaction judged alone",
  }),
  ignoreOwnWallets: Type.Boolean({
    description: "large_transfer: transfers to and from the caller's other tracked wallets are not judged; false for every other alert",
  }),
  disabledReason: nullable(Type.String()),
};

// Named schemas: components.schemas in the OpenAPI document (RiskAlert, CreatedRiskAlert, AlertEvent), a $ref where a
// route uses them (the *Ref below; refTo, schema-components.ts).
export const AlertSchema = Type.Object(alertProperties, { $id: "RiskAlert", description: "a risk alert: what it watches for on which wallet, and how it notifies" });
export const CreatedAlertSchema = Type.Object(
  {
    ...alertProperties,
    webhookSecret: Type.Optional(
      Type.String({ description: "webhook alerts: the whsec_ signing secret, shown in this response only" }),
    ),
  },
  { $id: "CreatedRiskAlert", description: "a risk alert as its create answers it: a RiskAlert's fields and, for a webhook alert, its signing secret" },
);
export const AlertRef = refTo(AlertSchema);
export const CreatedAlertRef = refTo(CreatedAlertSchema);
export const AlertListSchema = Type.Object({
  alerts: Type.Array(AlertRef),
  total: Type.Integer({ description: "the caller's alerts that the filters select, on every page (after aside)" }),
  page: Type.Optional(Type.Integer({ description: "the page number; absent when the page was read with after" })),
  limit: Type.Integer(),
  hasMore: Type.Boolean({ description: "extension: whether the list goes on past this page; to read on, set after to the alertId of its last alert" }),
});
export const AlertEventSchema = Type.Object(
  {
    eventId: Type.String(),
    condition: Condition,
    observed: Type.Number(),
    suppressed: Type.Boolean(),
    transactionSignature: Type.Optional(Type.String()),
    reason: Type.String({
      description:
        'one line saying what fired, e.g. "Sent 25,000 USDC to 7xKX…9fQa (threshold 10,000)."; the notification sent for the event carries the same (a webhook\'s data.reason)',
    }),
    createdAt: Type.String({ format: "date-time" }),
    notificationId: Type.Optional(Type.String()),
    digestNotificationId: Type.Union([Type.String(), Type.Null()], {
      description:
        "a suppressed event: the cooldown digest (risk_alert.suppressed) that tells, or will tell when the cooldown ends, of it; null for an event that was not suppressed, and when no digest was made (the alert had no destination)",
    }),
    judgedSettings: Type.Union(
      [
        Type.Object({
          threshold: Type.Number({ description: "the threshold the event was judged against" }),
          token: Type.Union([Type.String(), Type.Null()], { description: "large_transfer: the token filter (null: any token)" }),
          cooldownSeconds: Type.Integer({ description: "the cooldown that decided whether it was suppressed" }),
        }),
        Type.Null(),
      ],
      {
        description:
          "extension: the alert's settings the event was judged by, as they were when it fired (a later PATCH does not change them); null for an event recorded before the service kept them",
      },
    ),
    riskScore: Type.Union([Type.Integer(), Type.Null()], {
      description:
        "extension: the wallet's risk score with the event, as the notification carries it (for a suppressed event, as it would have); null for an event recorded before the service kept it",
    }),
    riskFactors: Type.Union([Type.Array(Type.String()), Type.Null()], { description: "extension: the risk factors with riskScore; null with it" }),
  },
  { $id: "AlertEvent", description: "one firing of an alert, sent or suppressed by its cooldown (GET /v1/risk/alerts/{alertId}/events)" },
);
export const EventListSchema = Type.Object({
  events: Type.Array(refTo(AlertEventSchema)),
  total: Type.Integer(),
  hasMore: Type.Boolean(),
});

export function eventJson(row: AlertEventRow) {
  return {
    eventId: row.eventId,
    condition: row.condition,
    observed: row.observed,
    suppressed: row.suppressed,
    ...(row.transactionSignature !== null ? { transactionSignature: row.transactionSignature } : {}),
    reason: row.reason,
    createdAt: row.createdAt,
    ...(row.notificationId !== null ? { notificationId: row.notificationId } : {}),
    digestNotificationId: row.digestNotificationId,
    // The threshold stored as its exact decimal, shown as the alert's own threshold is (a number).
    judgedSettings: row.judgedSettings && { ...row.judgedSettings, threshold: Number(row.judgedSettings.threshold) },
    riskScore: row.riskScore,
    riskFactors: row.riskFactors,
  };
}
