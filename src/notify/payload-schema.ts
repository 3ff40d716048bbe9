// The JSON body of each kind of POST to a webhookUrl, as JSON Schema: the NotificationPayload
// (domain/types.ts) of a firing and of a test, as they go out on the wire, in two forms.
// - Closed (ClosedTriggeredPayloadSchema, ClosedTestPayloadSchema): every object closed, every
//   set of values an enum. Exactly what the service sends today: the type checks at the end
//   fail the build when NotificationPayload gains, loses or changes a field that these do not,
//   and test/integration/openapi-webhooks.test.ts holds the payloads the builders really make,
//   and the requests a receiver gets, to them.
// - Published (TriggeredPayloadSchema, TestPayloadSchema), made from the closed ones: what the
//   OpenAPI document's `webhooks` serves (http/openapi-webhooks.ts), for receivers to be
//   generated or checked from. Within v1 a payload may gain fields and a field may gain values
//   (transaction.mint was added on 2026-11-27; a new risk factor or condition may come), so its
//   objects are open and its enums are strings whose description and `examples` list the values
//   known today. A closed object, or an `enum`, in the document made each such addition a 4xx
//   at every receiver checked against it: a permanent failure, the notification lost and the
//   alert's failure run started. An `enum` kept but described as open would still be enforced
//   by validators and by the enum types generators make (a Java or C# enum fails to read a value
//   it does not know); a plain string with its values listed is read by all of them. Required
//   fields, types, formats, patterns and bounds stay as they are: a body without a field, or
//   with one of the wrong type, is refused all the same.
import { Type, type Static } from "typebox";
import { ADDRESS_PATTERN } from "../domain/base58.ts";
import {
  CONDITIONS,
  LABEL_CATEGORIES,
  RISK_FACTORS,
  TRANSACTION_STATUSES,
  TRANSACTION_TYPES,
  type NotificationPayload,
  type Transaction,
} from "../domain/types.ts";

/** An enum of strings typed as such: some client generators make `any` of an untyped enum. */
const stringEnum = <Values extends string[]>(values: readonly [...Values], description?: string) =>
  Type.Enum(values, { type: "string", ...(description === undefined ? {} : { description }) });

/**
 * A transaction as GET /v1/transactions lists it (pipeline/notification.ts publicTransaction):
 * never its leg, always its mint.
 */
const TransactionSchema = Type.Object(
  {
    signature: Type.String({ description: "the chain transaction's signature" }),
    type: stringEnum(TRANSACTION_TYPES),
    amount: Type.Number({ description: "UI units of token" }),
    token: Type.String({ description: "a symbol, or the mint when there is none; as the feed gave it" }),
    mint: Type.Union([Type.String(), Type.Null()], { description: "the token's mint; null for native SOL, or when the feed gave none" }),
    from: Type.String(),
    to: Type.String(),
    blockTime: Type.Integer({ description: "Unix seconds" }),
    slot: Type.Integer(),
    fee: Type.Number({ description: "SOL" }),
    status: stringEnum(TRANSACTION_STATUSES),
  },
  {
    additionalProperties: false,
    description:
      "the movement that fired the alert, as GET /v1/transactions lists it: one leg of its transaction. For a large_transfer over several legs of one token and direction, observed is their total and this is the first of them (GET /v1/transactions lists the others under the same signature)",
  },
);

/** The fields both kinds carry, in the order the builders write them. */
const wallet = {
  alertId: Type.String({ pattern: "^alr_", description: "the alert (alr_…)" }),
  walletId: Type.String({ pattern: "^wal_", description: "the tracked wallet (wal_…)" }),
  address: Type.String({ pattern: ADDRESS_PATTERN, description: "the tracked wallet's Solana address" }),
  alias: Type.Union([Type.String(), Type.Null()], { description: "the wallet's alias as its owner wrote it; null when it has none" }),
  condition: stringEnum(CONDITIONS, "the alert's condition"),
  threshold: Type.Number({ description: "the alert's threshold, in its condition's unit" }),
};
const risk = {
  riskScore: Type.Integer({ minimum: 0, maximum: 100, description: "the wallet's risk score as of the firing (a test: now)" }),
  riskFactors: Type.Array(stringEnum(RISK_FACTORS), { description: "the wallet's active risk factors as of the firing (a test: now)" }),
};
const reason = Type.String({
  description:
    "one sentence for a person; it names a token by its well-known symbol, else by its mint shortened, else by a plain symbol given with no mint (never by a symbol a token gave itself): transaction.token and transaction.mint carry them as ingested",
});

/** A counterparty's labels (a firing's counterparty, a digest's strongest's). */
const labels = (description: string) =>
  Type.Array(
    Type.Object(
      {
        category: stringEnum(LABEL_CATEGORIES),
        score: Type.Number({ minimum: 0, maximum: 100 }),
        source: Type.Union([Type.String(), Type.Null()], {
          description:
            "the list that labelled it, as PUT /v1/risk/labels gave it (\"OFAC SDN\"); null when none was given, as the API says it " +
            "(a notification made until 2026-11-28, redelivered, carries \"\" for none)",
        }),
      },
      { additionalProperties: false },
    ),
    { description },
  );

/**
 * What the reason says, as fields (pipeline/notification.ts factsOf). Optional, each where its
 * condition gives it: added within v1 on 2026-11-28, so a notification made before then, redelivered,
 * has none of them.
 */
const facts = {
  direction: Type.Optional(
    stringEnum(["sent", "received"], "a transaction firing's: the wallet's side of transaction; no key for a self-transfer"),
  ),
  counterparty: Type.Optional(
    Type.Object(
      {
        address: Type.String({ description: "the other side of transaction" }),
        risk: Type.Union([Type.Number({ minimum: 0, maximum: 100 }), Type.Null()], {
          description:
            "the higher of its label score and its own risk score (when some caller tracks it), before the transaction's batch was scored, as suspicious_counterparty judges it; null when neither is known",
        }),
        labels: labels("every label of the address, every source's, the highest score first; empty when it has none"),
      },
      {
        additionalProperties: false,
        description: "a transaction firing's: the other side of transaction as the evaluation saw it; no key for a self-transfer",
      },
    ),
  ),
  activity: Type.Optional(
    Type.Object(
      {
        count: Type.Integer({ minimum: 0, description: "the wallet's transactions in the trailing 60 minutes, this one included" }),
        baselinePerHour: Type.Number({ minimum: 1, description: "its usual transactions per hour (the 7 days before, at least 1)" }),
      },
      { additionalProperties: false, description: "unusual_activity's: observed is count ÷ baselinePerHour, cut down" },
    ),
  ),
  previousScore: Type.Optional(
    Type.Integer({ minimum: 0, maximum: 100, description: "risk_score_increase's: the baseline the score rose from (observed is the rise)" }),
  ),
  window: Type.Optional(
    Type.Object(
      {
        seconds: Type.Integer({ minimum: 60, maximum: 86_400, description: "the alert's windowSeconds" }),
        transfers: Type.Integer({ minimum: 2, description: "the wallet's sends of the token in the trailing window, this one included" }),
      },
      {
        additionalProperties: false,
        description: "a large_transfer with windowSeconds, fired by the sum of several sends: observed is that sum (a single send at or above the threshold has none)",
      },
    ),
  ),
};

/**
 * Which notification and which event a firing's body is (pipeline/notification.ts FiringIds).
 * Optional: added within v1 on 2026-11-28, so a notification made before then, redelivered, has
 * neither; a receiver that must have the notification's id reads the webhook-id header.
 */
const ids = {
  notificationId: Type.Optional(
    Type.String({
      pattern: "^ntf_",
      description: "this notification (ntf_…): the webhook-id header's value, the same on every attempt, for a receiver that keeps only the body",
    }),
  ),
  eventId: Type.Optional(
    Type.String({
      pattern: "^evt_",
      description:
        "the firing (evt_…), as GET /v1/risk/alerts/{alertId}/events and GET /v1/notifications/{notificationId} name it, and as a cooldown digest's suppressed.eventIds name the ones it held back",
    }),
  ),
};

/** The conditions a transaction fires: every one but risk_score_increase, which a score change fires. */
const TRANSACTION_CONDITIONS = CONDITIONS.filter((condition) => condition !== "risk_score_increase");

const TriggeredDataSchema = Type.Object(
  {
    ...ids,
    ...wallet,
    observed: Type.Number({
      description:
        "the value that crossed the threshold, in the threshold's unit; for a large_transfer, the wallet's total over the transaction's legs of that token and direction (more than transaction.amount when there are several)",
    }),
    ...risk,
    transaction: Type.Optional(TransactionSchema),
    ...facts,
    reason,
  },
  {
    additionalProperties: false,
    // Said of the conditions known today, each by name: a condition added later is held to neither.
    allOf: [
      { if: { properties: { condition: { const: "risk_score_increase" } } }, then: { properties: { transaction: false } } },
      { if: { properties: { condition: { enum: TRANSACTION_CONDITIONS } } }, then: { required: ["transaction"] } },
    ],
    description: `transaction: there for ${TRANSACTION_CONDITIONS.join(", ")}; no key at all (not null) for risk_score_increase`,
  },
);

const TestDataSchema = Type.Object(
  {
    ...wallet,
    token: Type.Optional(
      Type.String({
        description:
          "a large_transfer alert's token filter as its owner gave it (a symbol or a mint): the threshold's unit; no key when the alert has none (any token). Added within v1 (2026-11-28)",
      }),
    ),
    observed: Type.Null({ description: "always null: nothing was observed" }),
    ...risk,
    reason,
  },
  { additionalProperties: false, description: "the alert's real settings and the wallet's current risk; never a transaction" },
);

const timestamp = Type.String({
  format: "date-time",
  description: "when the notification was made, the same on every retry; check webhook-timestamp for replays, not this",
});

/** A firing's body exactly as the service sends it today: for its own checks, not published. */
export const ClosedTriggeredPayloadSchema = Type.Object(
  { type: Type.Literal("risk_alert.triggered"), timestamp, data: TriggeredDataSchema },
  { additionalProperties: false, title: "RiskAlertTriggered" },
);

/** A test's body exactly as the service sends it today: for its own checks, not published. */
export const ClosedTestPayloadSchema = Type.Object(
  { type: Type.Literal("risk_alert.test"), timestamp, data: TestDataSchema },
  { additionalProperties: false, title: "RiskAlertTest" },
);

/** What the published schemas say of compatibility within v1 (the README says it too). */
export const COMPATIBILITY_NOTE =
  "Within v1 fields may be added to any object and values to any list of values: a receiver must ignore the fields and values it does not know.";

type Json = Record<string, unknown>;

/**
 * The published form of a closed body schema (a fresh copy): each object open, each enum of
 * strings a string whose description and `examples` name the values known today. The enums that
 * an `if` tests keep their values: they choose what applies to the conditions known today.
 */
function published(schema: unknown): Json {
  const open = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(open);
    if (node === null || typeof node !== "object") return node;
    const entries = Object.entries(node as Json)
      .filter(([key, value]) => !(key === "additionalProperties" && value === false))
      .map(([key, value]) => [key, key === "if" ? structuredClone(value) : open(value)] as const);
    const copy: Json = Object.fromEntries(entries);
    const values = copy.enum;
    if (!Array.isArray(values) || !values.every((value) => typeof value === "string")) return copy;
    const { enum: _known, ...rest } = copy;
    const known = `one of ${values.join(", ")} today; others may be added within v1`;
    return { ...rest, type: "string", description: rest.description === undefined ? known : `${String(rest.description)}: ${known}`, examples: values };
  };
  const body = open(JSON.parse(JSON.stringify(schema))) as Json;
  return { ...body, description: COMPATIBILITY_NOTE };
}

/** A firing's body as the OpenAPI document publishes it. */
export const TriggeredPayloadSchema: Json = published(ClosedTriggeredPayloadSchema);
/** A test's body as the OpenAPI document publishes it. */
export const TestPayloadSchema: Json = published(ClosedTestPayloadSchema);

/** A webhook body as the schemas describe it. */
export type WebhookPayload = Static<typeof ClosedTriggeredPayloadSchema> | Static<typeof ClosedTestPayloadSchema>;

// Compile-time links to NotificationPayload. Each entry fails to type-check when the two drift.
type Assert<T extends true> = T;
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Triggered = Static<typeof ClosedTriggeredPayloadSchema>;
type Test = Static<typeof ClosedTestPayloadSchema>;
type Data = NotificationPayload["data"];
export type PayloadSchemaChecks = [
  // What the schemas accept is a NotificationPayload: no field of another type, none left out.
  Assert<WebhookPayload extends NotificationPayload ? true : false>,
  // And they name every field it has: a firing all of them; a test all but the transaction.
  Assert<Same<keyof Triggered, keyof NotificationPayload>>,
  // A test alone carries its alert's token filter (a firing's unit is its transaction's token).
  Assert<Same<keyof Triggered["data"], Exclude<keyof Data, "suppressed" | "token">>>,
  Assert<Same<keyof Test["data"], Exclude<keyof Data, "transaction" | "suppressed" | keyof typeof facts | keyof typeof ids>>>,
  Assert<Same<keyof NonNullable<Triggered["data"]["transaction"]>, Exclude<keyof Transaction, "leg">>>,
  // A cooldown digest's body has a schema of its own (digest-payload-schema.ts).
  Assert<Same<WebhookPayload["type"], Exclude<NotificationPayload["type"], "risk_alert.suppressed">>>,
  Assert<Same<Triggered["data"]["condition"], Data["condition"]>>,
];

/** What a cooldown digest's body schema shares with these (digest-payload-schema.ts). */
export { wallet as walletFields, risk as riskFields, reason as reasonField, timestamp as timestampField, published as publishedSchema, labels as labelsField };
