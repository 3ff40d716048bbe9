// The JSON body of a cooldown digest (risk_alert.suppressed, pipeline/cooldown-digest.ts) as JSON
// Schema, closed (what the service sends today, for its own checks) and published (open, for the
// OpenAPI document's `webhooks`), as payload-schema.ts does for a firing and a test.
import { Type, type Static } from "typebox";
import { TOKENS_NAMED } from "../domain/held-back-by-token.ts";
import type { NotificationPayload, SuppressedSummary } from "../domain/types.ts";
import { labelsField, publishedSchema, reasonField, riskFields, timestampField, walletFields } from "./payload-schema.ts";

const time = (description: string) => Type.String({ format: "date-time", description });

/** A held-back firing's own fields, as `strongest` gives them. */
const heldBackFiringFields = {
  eventId: Type.String({ pattern: "^evt_", description: "the event (evt_…), as GET /v1/risk/alerts/{alertId}/events lists it" }),
  observed: Type.Number({ description: "its observed value, in the threshold's unit" }),
  reason: Type.String({ description: "its one-line reason, as its event carries it" }),
  transactionSignature: Type.Union([Type.String(), Type.Null()], { description: "the transaction that fired it; null for risk_score_increase" }),
  createdAt: time("when it was recorded"),
};

const SuppressedSchema = Type.Object(
  {
    count: Type.Integer({ minimum: 1, description: "how many firings the cooldown held back" }),
    windowStart: time("when the cooldown started: the time of the notification that started it"),
    windowEnd: time("when the cooldown ended (the digest is sent then)"),
    firstAt: time("when the first held-back firing was recorded"),
    lastAt: time("when the last held-back firing was recorded"),
    strongest: Type.Object(
      {
        ...heldBackFiringFields,
        counterparty: Type.Optional(
          Type.Object(
            {
              address: Type.String({ description: "the other side of its transaction, in full (reason shortens it)" }),
              labels: labelsField(
                "every label of the address, every source's, the highest score first, as loaded when the digest was built (at the cooldown's end; reason names the label of the firing's time); empty when it has none",
              ),
            },
            {
              additionalProperties: false,
              description:
                "a large_transfer's or suspicious_counterparty's: the other side of its transaction; no key when the transaction names no one other side of the wallet (a self-transfer, legs with several), for the other conditions, and in a digest built before 2026-11-28",
            },
          ),
        ),
      },
      {
        additionalProperties: false,
        description:
          "the strongest held-back firing: the highest observed value (for risk_score_increase, the highest score reached), the first among equals, as for a large_transfer alert with a token filter; for a large_transfer alert without one, the first of largestByToken (amounts of different tokens are not compared; in a digest built before 2026-11-28, the highest amount whatever its token)",
      },
    ),
    largestByToken: Type.Optional(
      Type.Array(
        Type.Object(
          {
            ...heldBackFiringFields,
            // An enum here, published as a string with examples (publishedSchema), as a firing's direction is.
            direction: Type.Enum(["sent", "received"], { type: "string", description: "the wallet's side of its transaction" }),
          },
          { additionalProperties: false },
        ),
        {
          minItems: 1,
          description: `a large_transfer alert's without a token filter only (added within v1, 2026-11-28): each token's largest held-back firing (amounts of different tokens are never compared), its largest sent one when the wallet sent any of that token (a received transfer, which anyone can make, never displaces a sent one, so a larger receipt of that token may be left out: direction says which it is); tokens the wallet sent first, then those it only received, each group with the well-known tokens first (SOL, USDC… by their mints: anyone can mint any other) and then in the order its tokens were first held back; at most ${TOKENS_NAMED} tokens today, otherTokens counting the rest. No key for an alert with a token filter (all its amounts are of one token: strongest is its highest), for the other conditions, and in a digest built before`,
        },
      ),
    ),
    otherTokens: Type.Optional(
      Type.Integer({ minimum: 0, description: "with largestByToken: how many more tokens had firings held back than it names (their events are in the alert's events list, GET /v1/risk/alerts/{alertId}/events; eventIds holds only the first 100 events)" }),
    ),
    eventIds: Type.Array(Type.String({ pattern: "^evt_" }), {
      maxItems: 100,
      description: "the held-back events' ids, oldest first, at most 100 (count says how many there were; GET /v1/risk/alerts/{alertId}/events lists them all)",
    }),
  },
  { additionalProperties: false, description: "what the cooldown held back" },
);

const SuppressedDataSchema = Type.Object(
  {
    ...walletFields,
    observed: Type.Number({ description: "the strongest held-back firing's observed value (suppressed.strongest.observed)" }),
    ...riskFields,
    reason: reasonField,
    suppressed: SuppressedSchema,
  },
  { additionalProperties: false, description: "the alert's settings, the wallet's risk when the digest was sent, and what the cooldown held back; never a transaction" },
);

/** A cooldown digest's body exactly as the service sends it today: for its own checks, not published. */
export const ClosedSuppressedPayloadSchema = Type.Object(
  { type: Type.Literal("risk_alert.suppressed"), timestamp: timestampField, data: SuppressedDataSchema },
  { additionalProperties: false, title: "RiskAlertSuppressed" },
);

/** A cooldown digest's body as the OpenAPI document publishes it. */
export const SuppressedPayloadSchema: Record<string, unknown> = publishedSchema(ClosedSuppressedPayloadSchema);

// Compile-time links to NotificationPayload, as payload-schema.ts has for the other two.
type Assert<T extends true> = T;
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Suppressed = Static<typeof ClosedSuppressedPayloadSchema>;
export type DigestSchemaChecks = [
  Assert<Suppressed extends NotificationPayload ? true : false>,
  Assert<Same<keyof Suppressed["data"]["suppressed"], keyof SuppressedSummary>>,
  Assert<Same<keyof Suppressed["data"]["suppressed"]["strongest"], keyof SuppressedSummary["strongest"]>>,
  Assert<Same<NonNullable<Suppressed["data"]["suppressed"]["largestByToken"]>[number], NonNullable<SuppressedSummary["largestByToken"]>[number]>>,
];
