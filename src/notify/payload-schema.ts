// The JSON body of each kind of POST to a webhookUrl, as JSON Schema: the NotificationPayload
// (domain/types.ts) of a firing and of a test, as they go out on the wire. The OpenAPI
// document's `webhooks` publishes these (http/openapi-webhooks.ts). The type checks at the end
// fail the build when NotificationPayload gains, loses or changes a field that these do not;
// test/integration/openapi-webhooks.test.ts checks the payloads the builders really make.
import { Type, type Static } from "typebox";
import { ADDRESS_PATTERN } from "../domain/base58.ts";
import {
  CONDITIONS,
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

const TriggeredDataSchema = Type.Object(
  {
    ...wallet,
    observed: Type.Number({
      description:
        "the value that crossed the threshold, in the threshold's unit; for a large_transfer, the wallet's total over the transaction's legs of that token and direction (more than transaction.amount when there are several)",
    }),
    ...risk,
    transaction: Type.Optional(TransactionSchema),
    reason,
  },
  {
    additionalProperties: false,
    // A transaction fires every condition but risk_score_increase, which a score change fires.
    allOf: [
      {
        if: { properties: { condition: { const: "risk_score_increase" } } },
        then: { properties: { transaction: false } },
        else: { required: ["transaction"] },
      },
    ],
    description: "transaction: there for large_transfer, suspicious_counterparty and unusual_activity; no key at all (not null) for risk_score_increase",
  },
);

const TestDataSchema = Type.Object(
  {
    ...wallet,
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

export const TriggeredPayloadSchema = Type.Object(
  { type: Type.Literal("risk_alert.triggered"), timestamp, data: TriggeredDataSchema },
  { additionalProperties: false, title: "RiskAlertTriggered" },
);

export const TestPayloadSchema = Type.Object(
  { type: Type.Literal("risk_alert.test"), timestamp, data: TestDataSchema },
  { additionalProperties: false, title: "RiskAlertTest" },
);

/** A webhook body as the schemas describe it. */
export type WebhookPayload = Static<typeof TriggeredPayloadSchema> | Static<typeof TestPayloadSchema>;

// Compile-time links to NotificationPayload. Each entry fails to type-check when the two drift.
type Assert<T extends true> = T;
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Triggered = Static<typeof TriggeredPayloadSchema>;
type Test = Static<typeof TestPayloadSchema>;
type Data = NotificationPayload["data"];
export type PayloadSchemaChecks = [
  // What the schemas accept is a NotificationPayload: no field of another type, none left out.
  Assert<WebhookPayload extends NotificationPayload ? true : false>,
  // And they name every field it has: a firing all of them; a test all but the transaction.
  Assert<Same<keyof Triggered, keyof NotificationPayload>>,
  Assert<Same<keyof Triggered["data"], keyof Data>>,
  Assert<Same<keyof Test["data"], Exclude<keyof Data, "transaction">>>,
  Assert<Same<keyof NonNullable<Triggered["data"]["transaction"]>, Exclude<keyof Transaction, "leg">>>,
  Assert<Same<WebhookPayload["type"], NotificationPayload["type"]>>,
  Assert<Same<Triggered["data"]["condition"], Data["condition"]>>,
];
