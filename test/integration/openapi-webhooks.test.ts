// The `webhooks` of the published OpenAPI document describe every POST the service makes to a
// webhookUrl. Payloads the real builders make (every condition, both kinds, each nullable field
// null and not) and requests captured at a loopback receiver from real deliveries are checked
// against the schemas and headers read from the served document, with Ajv (JSON Schema
// 2020-12, strict, formats checked), as a receiver generated from the document would. The
// published bodies are open (a v1 payload may gain fields and values; a receiver ignores what it
// does not know) and require their fields, so a field dropped from a payload, or of another
// type, fails here; every body is also held to the closed copies of the schemas
// (notify/payload-schema.ts), so a field or value added to a payload but not to its schema fails
// here too. The answers documented are held to the worker's own verdicts (retry-policy.ts).
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormatsPlugin from "ajv-formats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ActiveAlertRow } from "../../src/db/queries/pipeline.ts";
import {
  evaluateLargeTransfer,
  evaluateRiskScoreIncrease,
  evaluateSuspiciousCounterparty,
  evaluateUnusualActivity,
  evaluateWindowedLargeTransfer,
  type CounterpartyRisk,
  type Firing,
} from "../../src/domain/conditions/index.ts";
import { CONDITIONS, RISK_FACTORS, type Condition, type NotificationPayload, type Transaction } from "../../src/domain/types.ts";
import { WEBHOOK_ANSWERS, WEBHOOK_MEDIA_TYPE } from "../../src/http/openapi-webhooks.ts";
import { ClosedSuppressedPayloadSchema } from "../../src/notify/digest-payload-schema.ts";
import { COMPATIBILITY_NOTE, ClosedTestPayloadSchema, ClosedTriggeredPayloadSchema } from "../../src/notify/payload-schema.ts";
import { classifyOutcome, marksAlertGone } from "../../src/notify/retry-policy.ts";
import { triggeredPayload, type WalletRisk } from "../../src/pipeline/notification.ts";
import type { RunningWorkers } from "../../src/queue/run-workers.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { MINTS, randomAddress } from "../helpers/chain.ts";
import { putLabels, settled, startWorkers } from "../helpers/pipeline.ts";
import { bearer, ingestTransactions, makeTransaction } from "../helpers/seed.ts";
import { waitFor } from "../helpers/wait.ts";
import { startWebhookReceiver, type ReceivedRequest, type WebhookReceiver } from "../helpers/webhook-receiver.ts";

type Schema = Record<string, unknown>;
type HeaderParameter = { in: string; name: string; required?: boolean; schema: Schema };
type Operation = {
  security?: unknown[];
  parameters: HeaderParameter[];
  requestBody: { required?: boolean; content: Record<string, { schema: Schema }> };
  responses: Record<string, { description: string; headers?: Record<string, { schema: Schema }> }>;
};
type Document = {
  webhooks?: Record<string, { post?: Operation }>;
  paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: Schema }> }> }>>;
  components?: { schemas?: Record<string, Schema> };
};
type Kind = NotificationPayload["type"];

const KINDS: readonly Kind[] = ["risk_alert.triggered", "risk_alert.test"];
/** A firing's facts, each there only where its condition gives it (pipeline/notification.ts factsOf). */
const FACT_FIELDS = ["direction", "counterparty", "activity", "previousScore", "window"];
/** A firing's notification and event ids: added within v1 on 2026-11-28, so a notification made before, redelivered, has neither. */
const ID_FIELDS = ["notificationId", "eventId"];
/** Headers of the connection and the message itself, which no OpenAPI operation declares. */
const TRANSPORT_HEADERS = new Set(["host", "content-length", "connection", "keep-alive", "transfer-encoding"]);
// ajv-formats is CommonJS; under NodeNext its default import is the module object's type.
const addFormats = addFormatsPlugin as unknown as (ajv: Ajv2020) => Ajv2020;

let t: TestApp;
let workers: RunningWorkers;
let receiver: WebhookReceiver;
let document: Document;
const ajv = addFormats(new Ajv2020({ strict: true, allErrors: true, allowUnionTypes: true }));
const validators = new Map<string, ValidateFunction>();

beforeAll(async () => {
  t = await startTestApp("openapi-webhooks");
  receiver = await startWebhookReceiver();
  workers = startWorkers(t, ["transactions", "risk", "deliver-webhook"]);
  document = (await t.app.inject({ url: "/v1/openapi.json" })).json<Document>();
});
afterAll(async () => {
  await workers?.close();
  await receiver?.close();
  await t?.close();
});

function operationOf(kind: string): Operation {
  const operation = document.webhooks?.[kind]?.post;
  if (!operation) throw new Error(`the document has no webhooks["${kind}"].post`);
  return operation;
}

const bodySchemaOf = (kind: string): Schema => operationOf(kind).requestBody.content[WEBHOOK_MEDIA_TYPE]!.schema;

/** The closed copy of a kind's body schema, as JSON: what the service sends today, exactly. */
const closedSchemaOf = (kind: string): Schema =>
  JSON.parse(JSON.stringify(kind === "risk_alert.test" ? ClosedTestPayloadSchema : ClosedTriggeredPayloadSchema)) as Schema;

function validatorOf(id: string, schema: Schema): ValidateFunction {
  let validate = validators.get(id);
  if (!validate) {
    validate = ajv.compile(schema);
    validators.set(id, validate);
  }
  return validate;
}

/** Everything wrong with a body as a schema sees it; [] when it conforms. */
function schemaErrors(id: string, schema: Schema, body: unknown): string[] {
  const validate = validatorOf(id, schema);
  if (validate(body)) return [];
  return (validate.errors ?? []).map((e) => `${id} ${e.instancePath || "(body)"} ${e.message ?? ""} ${JSON.stringify(e.params)}`);
}

/** Everything wrong with a body as the kind's documented schema sees it. */
const publishedErrors = (kind: string, body: unknown) => schemaErrors(`published ${kind}`, bodySchemaOf(kind), body);
/** The same, as the closed copy sees it. */
const closedErrors = (kind: string, body: unknown) => schemaErrors(`closed ${kind}`, closedSchemaOf(kind), body);
/** Both: a body the service sends must conform to what it publishes and to what it sends today. */
const bodyErrors = (kind: string, body: unknown) => [...publishedErrors(kind, body), ...closedErrors(kind, body)];

/** Everything wrong with the headers a receiver got, against the operation's header parameters and body media type. */
function headerErrors(kind: string, headers: ReceivedRequest["headers"]): string[] {
  const operation = operationOf(kind);
  const declared = new Map(operation.parameters.filter((p) => p.in === "header").map((p) => [p.name.toLowerCase(), p]));
  const problems: string[] = [];
  for (const [name, parameter] of declared) {
    const value = headers[name];
    if (value === undefined) {
      if (parameter.required) problems.push(`${kind}: required header ${name} missing`);
      continue;
    }
    // OpenAPI's simple style: an integer header is read as the number it spells.
    const text = String(value);
    const read = parameter.schema.type === "integer" && /^\d+$/.test(text) ? Number(text) : text;
    const validate = validatorOf(`${kind} header ${name}`, parameter.schema);
    if (!validate(read)) problems.push(`${kind}: header ${name} ${JSON.stringify(text)} ${ajv.errorsText(validate.errors)}`);
  }
  const mediaTypes = Object.keys(operation.requestBody.content);
  for (const [name, value] of Object.entries(headers)) {
    if (TRANSPORT_HEADERS.has(name) || declared.has(name)) continue;
    if (name === "content-type") {
      if (!mediaTypes.includes(String(value))) problems.push(`${kind}: content-type ${String(value)} is not the documented ${mediaTypes.join(", ")}`);
      continue;
    }
    problems.push(`${kind}: header ${name} (${String(value)}) sent but not declared`);
  }
  return problems;
}

/** Every object schema that a body's values meet (through properties, items and anyOf), with where it is. */
function objectsIn(schema: unknown, at = "#"): Array<{ at: string; node: Schema }> {
  if (schema === null || typeof schema !== "object") return [];
  const node = schema as Schema;
  const properties = Object.entries((node.properties ?? {}) as Record<string, unknown>);
  return [
    ...(node.properties ? [{ at, node }] : []),
    ...properties.flatMap(([name, child]) => objectsIn(child, `${at}/properties/${name}`)),
    ...objectsIn(node.items, `${at}/items`),
    ...((node.anyOf ?? []) as unknown[]).flatMap((branch, i) => objectsIn(branch, `${at}/anyOf/${i}`)),
  ];
}

/** The names of every field, at every depth, of some payloads: "data.transaction.mint". */
function fieldNames(value: unknown, prefix = ""): string[] {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return [];
  return Object.entries(value).flatMap(([key, child]) => [`${prefix}${key}`, ...fieldNames(child, `${prefix}${key}.`)]);
}

/** The same, of a body schema's properties. */
function schemaFieldNames(schema: Schema, prefix = ""): string[] {
  const properties = (schema.properties ?? {}) as Record<string, Schema>;
  return Object.entries(properties).flatMap(([key, child]) => [`${prefix}${key}`, ...schemaFieldNames(child, `${prefix}${key}.`)]);
}

const sorted = (names: Iterable<string>) => [...new Set(names)].sort();

// The real builders: the condition functions decide a firing, triggeredPayload makes its body.
const WALLET = randomAddress();
const COUNTERPARTY = randomAddress();

function alertRow(condition: Condition, alias: string | null): ActiveAlertRow {
  return {
    alertId: "alr_01jz0000000000000000000000",
    walletId: "wal_01jz0000000000000000000000",
    address: WALLET,
    condition,
    threshold: { large_transfer: 1000, suspicious_counterparty: 75, unusual_activity: 5, risk_score_increase: 10 }[condition],
    token: null,
    baselineScore: 10,
    alias,
    channel: "webhook",
    webhookUrl: "https://hooks.example.com/risk",
    recipient: null,
  };
}

/** A firing as the pipeline hands it on, with the other side as its evaluation saw it (transaction-firings.ts). */
const seenWith = (firing: Firing | null, counterparty: CounterpartyRisk): Firing | null =>
  firing && { ...firing, facts: { ...firing.facts, counterparty } };

function firingOf(alert: ActiveAlertRow, tx: Transaction): Firing | null {
  switch (alert.condition) {
    case "large_transfer":
      // A tracked counterparty with a score and no label.
      return seenWith(evaluateLargeTransfer(alert, tx), { address: COUNTERPARTY, labelScore: null, labelCategory: null, riskScore: 30, labels: [] });
    case "suspicious_counterparty":
      return evaluateSuspiciousCounterparty(alert, tx, {
        address: COUNTERPARTY,
        labelScore: 95,
        labelCategory: "mixer",
        riskScore: null,
        labels: [
          { category: "mixer", score: 95, source: "OFAC SDN" },
          { category: "exchange", score: 40, source: "vendor-x" },
          // Loaded without a source: null, as the API says it.
          { category: "flagged", score: 30, source: null },
        ],
      });
    case "unusual_activity":
      // A counterparty nobody labelled or tracks: its risk unknown (null).
      return seenWith(evaluateUnusualActivity(alert, tx, { countBefore: 4, countAfter: 5, previous7DaysCount: 0 }), {
        address: COUNTERPARTY,
        labelScore: null,
        labelCategory: null,
        riskScore: null,
        labels: [],
      });
    case "risk_score_increase":
      return evaluateRiskScoreIncrease(alert, { id: 1, address: WALLET, previousScore: 10, score: 40, factors: ["mixer_interaction"] });
  }
}

/** Firings of every condition: with an alias and without, of native SOL (no mint, a later leg) and of a token with its mint, at the extremes of the risk score. */
function builtFirings(): NotificationPayload[] {
  const transactions: Transaction[] = [
    makeTransaction({ from: WALLET, to: COUNTERPARTY, amount: 2500, leg: 1 }),
    makeTransaction({ from: COUNTERPARTY, to: WALLET, amount: 25_000.5, token: "USDC", mint: MINTS.USDC, type: "swap", status: "success" }),
  ];
  const risks: WalletRisk[] = [
    { score: 0, factors: [] },
    { score: 100, factors: RISK_FACTORS },
  ];
  const payloads: NotificationPayload[] = [];
  for (const condition of CONDITIONS) {
    for (const alias of ["Treasury", null]) {
      for (const [i, tx] of transactions.entries()) {
        const alert = alertRow(condition, alias);
        const firing = firingOf(alert, tx);
        if (firing === null) throw new Error(`${condition} did not fire on ${JSON.stringify(tx)}`);
        // The pipeline hands a transaction to the builder only when one fired the alert.
        const transaction = condition === "risk_score_increase" ? undefined : tx;
        payloads.push(triggeredPayload(alert, firing, risks[i]!, transaction, new Date(), { notificationId: `ntf_${payloads.length}`, eventId: `evt_${payloads.length}` }));
      }
    }
  }
  // A large_transfer with a window, fired by the sum of two sends (900 SOL before, 2,500 with this one).
  const windowed = { ...alertRow("large_transfer", "Treasury"), token: "SOL", windowSeconds: 3600 };
  const trailing = { before: { units: 900n, scale: 0 }, including: { units: 3400n, scale: 0 }, own: { units: 2500n, scale: 0 }, transfers: 2 };
  const summed = evaluateWindowedLargeTransfer(windowed, transactions[0]!, trailing);
  if (summed === null) throw new Error("the windowed large_transfer did not fire");
  payloads.push(triggeredPayload(windowed, summed, risks[0]!, transactions[0], new Date(), { notificationId: `ntf_${payloads.length}`, eventId: `evt_${payloads.length}` }));
  return payloads;
}

describe("the webhooks of the OpenAPI document", () => {
  it("describes three POSTs to a webhookUrl, a firing, a test and a cooldown digest, each keyed by its body's type; a disabled alert's notice is not one (it goes by email)", () => {
    // The cooldown digest's body is checked in test/unit/render-digest.test.ts and sent in cooldown-digest.test.ts.
    expect(Object.keys(document.webhooks ?? {}).sort()).toEqual([...KINDS, "risk_alert.suppressed"].sort());
    for (const kind of KINDS) {
      expect(Object.keys(document.webhooks![kind]!), kind).toEqual(["post"]);
      const properties = bodySchemaOf(kind).properties as Record<string, Schema>;
      expect(properties.type!.const, kind).toBe(kind);
      expect(operationOf(kind).requestBody.required, kind).toBe(true);
      // Signed, not authorised with the API's bearer token.
      expect(operationOf(kind).security, kind).toEqual([]);
    }
  });

  it("publishes every object of the bodies open, closed only in the service's own copies, and requires every field, but for a firing's transaction", () => {
    for (const kind of KINDS) {
      for (const [form, schema] of [["published", bodySchemaOf(kind)], ["closed", closedSchemaOf(kind)]] as const) {
        const objects = objectsIn(schema);
        expect(objects.map(({ at }) => at), `${form} ${kind}`).toEqual(
          kind === "risk_alert.test"
            ? ["#", "#/properties/data"]
            : [
                "#",
                "#/properties/data",
                "#/properties/data/properties/transaction",
                "#/properties/data/properties/counterparty",
                "#/properties/data/properties/counterparty/properties/labels/items",
                "#/properties/data/properties/activity",
                "#/properties/data/properties/window",
              ],
        );
        for (const { at, node } of objects) {
          expect(node.additionalProperties, `${form} ${kind} ${at}`).toBe(form === "closed" ? false : undefined);
          // The transaction, and the facts added within v1 (a notification made before them, redelivered, has none).
          // A test's token: only when its alert filters large transfers by one.
          const optional =
            at !== "#/properties/data" ? [] : kind === "risk_alert.triggered" ? ["transaction", ...FACT_FIELDS, ...ID_FIELDS] : kind === "risk_alert.test" ? ["token"] : [];
          const properties = Object.keys(node.properties as Schema).filter((name) => !optional.includes(name));
          expect(sorted(node.required as string[]), `${form} ${kind} ${at}`).toEqual(sorted(properties));
        }
      }
      expect(bodySchemaOf(kind).description, kind).toBe(COMPATIBILITY_NOTE);
    }
  });

  it("publishes a digest's strongest.counterparty as optional (a digest built before 2026-11-28 has none), open in the document and closed in the service's copy, and says so", () => {
    const at = "#/properties/data/properties/suppressed/properties/strongest";
    for (const [form, schema] of [
      ["published", bodySchemaOf("risk_alert.suppressed")],
      ["closed", JSON.parse(JSON.stringify(ClosedSuppressedPayloadSchema)) as Schema],
    ] as const) {
      const objects = new Map(objectsIn(schema).map(({ at: where, node }) => [where, node]));
      const strongest = objects.get(at)!;
      expect(Object.keys(strongest.properties as Schema), form).toContain("counterparty");
      expect(strongest.required, form).not.toContain("counterparty");
      expect(sorted(strongest.required as string[]), form).toEqual(sorted(Object.keys(strongest.properties as Schema).filter((name) => name !== "counterparty")));
      for (const where of [`${at}/properties/counterparty`, `${at}/properties/counterparty/properties/labels/items`]) {
        expect(objects.get(where)?.additionalProperties, `${form} ${where}`).toBe(form === "closed" ? false : undefined);
      }
      expect(objects.get(`${at}/properties/counterparty`)!.required, form).toEqual(["address", "labels"]);
    }
    const operation = document.webhooks!["risk_alert.suppressed"]!.post as Operation & { description: string };
    expect(operation.description).toContain("suppressed.strongest.counterparty");
  });

  it("publishes each list of values as a string naming them all, that may gain others, where the closed copies have an enum", () => {
    /** Every enum of a schema's values (not those an `if` tests), by where it is. */
    const enumsIn = (node: unknown, at = "#"): Array<{ at: string; values: unknown[] }> => {
      if (node === null || typeof node !== "object") return [];
      return Object.entries(node as Schema).flatMap(([key, child]) =>
        key === "enum" ? [{ at, values: child as unknown[] }] : key === "if" ? [] : enumsIn(child, `${at}/${key}`),
      );
    };
    for (const kind of KINDS) {
      const closed = enumsIn(closedSchemaOf(kind));
      expect(closed.map(({ at }) => at).sort(), kind).toEqual(
        [
          "#/properties/data/properties/condition",
          "#/properties/data/properties/riskFactors/items",
          ...(kind === "risk_alert.triggered"
            ? [
                "#/properties/data/properties/transaction/properties/type",
                "#/properties/data/properties/transaction/properties/status",
                "#/properties/data/properties/direction",
                "#/properties/data/properties/counterparty/properties/labels/items/properties/category",
              ]
            : []),
        ].sort(),
      );
      expect(enumsIn(bodySchemaOf(kind)), kind).toEqual([]);
      for (const { at, values } of closed) {
        const node = at
          .slice(2)
          .split("/")
          .reduce<Schema>((parent, key) => parent[key] as Schema, bodySchemaOf(kind));
        expect(node, `${kind} ${at}`).toMatchObject({ type: "string", examples: values });
        expect(node.description, `${kind} ${at}`).toContain(`one of ${values.join(", ")} today; others may be added within v1`);
      }
    }
  });

  it("accepts the body of a firing of every condition, with an alias or null, a transaction of SOL (mint null) or of a token, or none", () => {
    const payloads = builtFirings();
    expect(payloads.map((p) => bodyErrors("risk_alert.triggered", JSON.parse(JSON.stringify(p))))).toEqual(payloads.map(() => []));
    // Between them they carry every field the schema names, each null where it may be.
    const schema = bodySchemaOf("risk_alert.triggered");
    expect(sorted(payloads.flatMap((p) => fieldNames(p)))).toEqual(sorted(schemaFieldNames(schema)));
    expect(payloads.some((p) => p.data.alias === null) && payloads.some((p) => p.data.transaction?.mint === null)).toBe(true);
    expect(payloads.some((p) => p.data.transaction?.mint === MINTS.USDC) && payloads.some((p) => !("transaction" in p.data))).toBe(true);
    // A firing is not a test.
    expect(bodyErrors("risk_alert.test", payloads[0])).not.toEqual([]);
  });

  it("accepts the body of a test of every condition, observed null, with an alias or null, as POST /v1/risk/alerts/{id}/test stores it", async () => {
    const token = await t.token("tess");
    const payloads: unknown[] = [];
    for (const alias of ["Ops wallet", null]) {
      const wallet = await t.app.inject({ method: "POST", url: "/v1/wallets", headers: bearer(token), payload: { address: randomAddress(), ...(alias ? { alias } : {}) } });
      expect(wallet.statusCode, wallet.body).toBe(201);
      for (const condition of CONDITIONS) {
        const created = await t.app.inject({
          method: "POST",
          url: "/v1/risk/alerts",
          headers: bearer(token),
          payload: { walletId: wallet.json().walletId, condition, threshold: condition === "large_transfer" ? 1000 : undefined, notificationMethod: "webhook", webhookUrl: receiver.route("/tests").url },
        });
        expect(created.statusCode, created.body).toBe(201);
        const tested = await t.app.inject({ method: "POST", url: `/v1/risk/alerts/${created.json().alertId}/test`, headers: bearer(token) });
        expect(tested.statusCode, tested.body).toBe(202);
        const [row] = await t.deps.sql<Array<{ payload: unknown }>>`select payload from notifications where id = ${tested.json().notificationId}`;
        payloads.push(typeof row!.payload === "string" ? JSON.parse(row!.payload) : row!.payload);
      }
    }
    // A large_transfer alert filtered by a token: its test names the token.
    const filtered = await t.app.inject({
      method: "POST",
      url: "/v1/risk/alerts",
      headers: bearer(token),
      payload: {
        walletId: (await t.app.inject({ method: "POST", url: "/v1/wallets", headers: bearer(token), payload: { address: randomAddress() } })).json().walletId,
        condition: "large_transfer",
        threshold: 1000,
        token: "USDC",
        notificationMethod: "webhook",
        webhookUrl: receiver.route("/tests").url,
      },
    });
    expect(filtered.statusCode, filtered.body).toBe(201);
    const filteredTest = await t.app.inject({ method: "POST", url: `/v1/risk/alerts/${filtered.json().alertId}/test`, headers: bearer(token) });
    const [filteredRow] = await t.deps.sql<Array<{ payload: unknown }>>`select payload from notifications where id = ${filteredTest.json().notificationId}`;
    payloads.push(typeof filteredRow!.payload === "string" ? JSON.parse(filteredRow!.payload) : filteredRow!.payload);
    expect(payloads.map((p) => bodyErrors("risk_alert.test", p))).toEqual(payloads.map(() => []));
    expect(sorted(payloads.flatMap((p) => fieldNames(p)))).toEqual(sorted(schemaFieldNames(bodySchemaOf("risk_alert.test"))));
    expect(bodyErrors("risk_alert.triggered", payloads[0])).not.toEqual([]);
  });

  describe("a body that differs from what the service sends", () => {
    const [firing] = builtFirings().filter((p) => p.data.condition === "large_transfer" && p.data.transaction?.mint === null);
    const base = JSON.parse(JSON.stringify(firing)) as Record<string, Record<string, unknown>>;
    const variant = (errors: (kind: string, body: unknown) => string[], change: (body: typeof base) => void) => {
      const copy = structuredClone(base);
      change(copy);
      return errors("risk_alert.triggered", copy);
    };
    const transactionOf = (b: typeof base) => b.data!.transaction as Record<string, unknown>;
    /** Fields and values a later v1 may add, at every level. */
    const additions: Array<[string, (b: typeof base) => void]> = [
      ["a field of the body", (b) => (b.extra = {})],
      ["a field of data", (b) => (b.data!.extra = 1)],
      ["a field of the transaction", (b) => (transactionOf(b).leg = 0)],
      ["a condition", (b) => (b.data!.condition = "whale_movement")],
      ["a risk factor", (b) => (b.data!.riskFactors = ["large_outflow", "bridge_hop"])],
      ["a transaction type", (b) => (transactionOf(b).type = "bridge")],
      ["a transaction status", (b) => (transactionOf(b).status = "pending")],
    ];

    it("is accepted by the published schema when it only adds fields or values, at every level", () => {
      expect(variant(publishedErrors, () => {})).toEqual([]);
      for (const [what, change] of additions) expect(variant(publishedErrors, change), what).toEqual([]);
    });

    it("is refused by the closed copies when it adds a field or value they do not name, so that a payload that gains one fails these tests until its schema names it", () => {
      expect(variant(closedErrors, () => {})).toEqual([]);
      for (const [what, change] of additions) {
        expect(variant(closedErrors, change), what).toContainEqual(
          expect.stringMatching(/must NOT have additional properties|must be equal to one of the allowed values/),
        );
      }
    });

    it("is refused by both when it lacks a field either requires, at every level, or has one of the wrong type or null where null is not allowed", () => {
      for (const errors of [publishedErrors, closedErrors]) {
        for (const field of fieldNames(base).filter((name) => ![...FACT_FIELDS, ...ID_FIELDS].some((optional) => name === `data.${optional}`))) {
          const path = field.split(".");
          const missing = variant(errors, (b) => {
            const parent = path.slice(0, -1).reduce<Record<string, unknown>>((node, key) => node[key] as Record<string, unknown>, b);
            delete parent[path.at(-1)!];
          });
          expect(missing, `without ${field}`).toContainEqual(expect.stringContaining("must have required property"));
        }
        expect(variant(errors, (b) => (b.data!.riskScore = null))).toContainEqual(expect.stringContaining("/data/riskScore must be integer"));
        expect(variant(errors, (b) => (b.data!.riskScore = "40"))).toContainEqual(expect.stringContaining("/data/riskScore must be integer"));
        expect(variant(errors, (b) => (b.data!.observed = null))).toContainEqual(expect.stringContaining("/data/observed must be number"));
        expect(variant(errors, (b) => (b.data!.condition = 5))).toContainEqual(expect.stringContaining("/data/condition must be string"));
        expect(variant(errors, (b) => (b.data!.riskFactors = [1]))).toContainEqual(expect.stringContaining("/data/riskFactors/0 must be string"));
        expect(variant(errors, (b) => (transactionOf(b).amount = "2500"))).toContainEqual(expect.stringContaining("/data/transaction/amount must be number"));
        // The facts: optional, but of their types when there.
        const counterpartyOf = (b: typeof base) => b.data!.counterparty as Record<string, unknown>;
        expect(variant(errors, (b) => (b.data!.direction = 1))).toContainEqual(expect.stringContaining("/data/direction must be string"));
        expect(variant(errors, (b) => (counterpartyOf(b).risk = "high"))).toContainEqual(expect.stringContaining("/data/counterparty/risk must be number"));
        expect(variant(errors, (b) => (counterpartyOf(b).labels = [{ category: "sanctioned", score: 100 }]))).toContainEqual(
          expect.stringContaining("must have required property 'source'"),
        );
        expect(variant(errors, (b) => (counterpartyOf(b).labels = [{ category: "sanctioned", score: 100, source: 5 }]))).toContainEqual(
          expect.stringContaining("/data/counterparty/labels/0/source must be string"),
        );
        expect(variant(errors, (b) => (counterpartyOf(b).labels = [{ category: "sanctioned", score: 100, source: null }]))).toEqual([]);
        for (const fact of FACT_FIELDS) expect(variant(errors, (b) => delete b.data![fact]), `without data.${fact}`).toEqual([]);
        expect(variant(errors, (b) => ((b as Record<string, unknown>).timestamp = "yesterday"))).toContainEqual(expect.stringContaining('/timestamp must match format "date-time"'));
        // A score change fires risk_score_increase: its body has no transaction.
        expect(variant(errors, (b) => (b.data!.condition = "risk_score_increase"))).toContainEqual(expect.stringContaining('must match "then" schema'));
        // A transfer's condition: its body has one.
        expect(variant(errors, (b) => delete b.data!.transaction)).toContainEqual(expect.stringContaining("must have required property 'transaction'"));
      }
    });
  });

  it("gives a firing's transaction the fields of an entry of GET /v1/transactions, as the README promises", () => {
    const strip = (schema: unknown): unknown =>
      JSON.parse(JSON.stringify(schema), (key: string, value: unknown) => (key === "description" ? undefined : value));
    const listed = document.paths["/v1/transactions"]!.get!.responses["200"]!.content!["application/json"]!.schema;
    // An entry is the named schema Transaction (components.schemas), which the list references.
    const item = (listed.properties as Record<string, Schema>).transactions!.items as Schema;
    const entry = typeof item.$ref === "string" ? document.components!.schemas![item.$ref.replace("#/components/schemas/", "")]! : item;
    const transactionIn = (body: Schema) => ((body.properties as Record<string, Schema>).data!.properties as Record<string, Schema>).transaction!;
    // The same fields, of the same types and values as sent today; published, their lists of values may grow.
    expect(strip(transactionIn(closedSchemaOf("risk_alert.triggered")).properties)).toEqual(strip(entry.properties));
    expect(Object.keys(transactionIn(bodySchemaOf("risk_alert.triggered")).properties as Schema)).toEqual(Object.keys(entry.properties as Schema));
  });

  it("documents each answer as the worker acts on it: 2xx delivered, 410 disables the alert, 408, 425, 429 and 5xx retried after Retry-After, any other fails", () => {
    for (const kind of KINDS) {
      const responses = operationOf(kind).responses;
      expect(Object.keys(responses).sort(), kind).toEqual(Object.keys(WEBHOOK_ANSWERS).sort());
      for (let status = 100; status <= 599; status += 1) {
        const key = [String(status), `${String(status)[0]}XX`, "default"].find((candidate) => responses[candidate])!;
        const answer = WEBHOOK_ANSWERS[key]!;
        expect(classifyOutcome({ statusCode: status }), `${kind} ${status} (${key})`).toBe(answer.verdict);
        expect(marksAlertGone({ statusCode: status }), `${kind} ${status} (${key})`).toBe(answer.disablesAlert);
        expect(responses[key]!.description, `${kind} ${key}`).toBe(answer.description);
        // Retry-After is read from the answers that are retried, and only from those.
        expect(Object.keys(responses[key]!.headers ?? {}), `${kind} ${key}`).toEqual(answer.verdict === "retry" ? ["retry-after"] : []);
      }
    }
    expect(WEBHOOK_ANSWERS["2XX"]!.verdict).toBe("delivered");
    expect(WEBHOOK_ANSWERS["410"]).toMatchObject({ verdict: "permanent", disablesAlert: true });
  });
});

describe("requests a receiver gets from real deliveries", () => {
  type Alert = { alertId: string; webhookSecret: string };

  it("delivers firings of every condition and tests, each body valid against its documented schema, signed, with exactly the documented headers", async () => {
    const token = await t.token("alice");
    const now = Math.floor(Date.now() / 1000);
    const track = async (alias: string | null) => {
      const res = await t.app.inject({ method: "POST", url: "/v1/wallets", headers: bearer(token), payload: { address: randomAddress(), ...(alias ? { alias } : {}) } });
      expect(res.statusCode, res.body).toBe(201);
      return res.json<{ walletId: string; address: string }>();
    };
    const hot = await track("Hot wallet");
    const bare = await track(null);
    const alertOn = async (walletId: string, condition: Condition, threshold: number | undefined, path: string) => {
      const route = receiver.route(path);
      const res = await t.app.inject({
        method: "POST",
        url: "/v1/risk/alerts",
        headers: bearer(token),
        payload: { walletId, condition, ...(threshold === undefined ? {} : { threshold }), notificationMethod: "webhook", webhookUrl: route.url },
      });
      expect(res.statusCode, res.body).toBe(201);
      const alert = res.json<Alert>();
      route.verifyWith(alert.webhookSecret);
      return { ...alert, route };
    };
    const alerts = [
      await alertOn(hot.walletId, "large_transfer", 1000, "/large_transfer"),
      await alertOn(hot.walletId, "suspicious_counterparty", undefined, "/suspicious_counterparty"),
      await alertOn(hot.walletId, "unusual_activity", 1, "/unusual_activity"),
      await alertOn(hot.walletId, "risk_score_increase", 10, "/risk_score_increase"),
      await alertOn(bare.walletId, "large_transfer", 1, "/no-alias"),
    ];
    // One answer to be retried on the way: the retry is a request like any other.
    receiver.route("/risk_score_increase").respond({ status: 503, headers: { "retry-after": "1" }, body: "busy" });

    for (const alert of alerts) {
      const res = await t.app.inject({ method: "POST", url: `/v1/risk/alerts/${alert.alertId}/test`, headers: bearer(token) });
      expect(res.statusCode, res.body).toBe(202);
    }
    // A large transfer of SOL (no mint) to an address labelled a mixer afterwards (a rescore:
    // the score rises), then a token with its mint back from it, and a token transfer of the wallet without an alias.
    const mixer = randomAddress();
    await ingestTransactions(t, token, [makeTransaction({ from: hot.address, to: mixer, amount: 2500, blockTime: now })]);
    await settled(t);
    expect((await putLabels(t, token, [{ address: mixer, category: "mixer", score: 95 }])).statusCode).toBe(200);
    await ingestTransactions(t, token, [
      makeTransaction({ from: mixer, to: hot.address, amount: 1, token: "USDC", mint: MINTS.USDC, blockTime: now + 1 }),
      makeTransaction({ from: bare.address, to: randomAddress(), amount: 5, token: "USDC", mint: MINTS.USDC, blockTime: now + 1 }),
    ]);
    await settled(t);

    const kindsAt = (alert: (typeof alerts)[number]) => new Set(alert.route.requests.map((r) => (JSON.parse(r.body) as { type: string }).type));
    await waitFor("a firing and a test to reach every alert's receiver", async () => alerts.every((alert) => kindsAt(alert).size === 2));
    await waitFor("every notification to be delivered", async () => {
      const [row] = await t.deps.sql<Array<{ open: number }>>`select count(*)::int as open from notifications where status <> 'delivered' and alert_id in ${t.deps.sql(alerts.map((a) => a.alertId))}`;
      return row!.open === 0;
    });

    const requests = alerts.flatMap((alert) => alert.route.requests.map((request) => ({ alert, request })));
    const problems = requests.flatMap(({ alert, request }) => {
      const body = JSON.parse(request.body) as NotificationPayload;
      return [
        ...(request.method === "POST" ? [] : [`${request.path}: ${request.method}, not POST`]),
        ...(request.verifiedWith.length === 1 && request.verifiedWith[0] === alert.webhookSecret ? [] : [`${request.path}: signature does not verify`]),
        ...bodyErrors(body.type, body),
        ...headerErrors(body.type, request.headers),
      ];
    });
    expect(problems).toEqual([]);
    // Every condition fired, and the payloads had a null alias, a null mint and a mint among them.
    const firings = requests.map(({ request }) => JSON.parse(request.body) as NotificationPayload).filter((p) => p.type === "risk_alert.triggered");
    expect(sorted(firings.map((p) => p.data.condition))).toEqual(sorted(CONDITIONS));
    expect(firings.some((p) => p.data.alias === null && p.data.transaction?.mint === MINTS.USDC)).toBe(true);
    expect(firings.some((p) => p.data.transaction !== undefined && p.data.transaction.mint === null)).toBe(true);
    // A firing's body names its notification (the webhook-id) and its event, for a receiver that keeps only the body.
    for (const { request } of requests) {
      const body = JSON.parse(request.body) as NotificationPayload;
      if (body.type !== "risk_alert.triggered") continue;
      expect(body.data.notificationId).toBe(String(request.headers["webhook-id"]));
      const [row] = await t.deps.sql<Array<{ eventId: string | null }>>`select event_id as "eventId" from notifications where id = ${body.data.notificationId!}`;
      expect(body.data.eventId).toMatch(/^evt_/);
      expect(body.data.eventId).toBe(row!.eventId);
    }
    // The 503 was retried under the same webhook-id, with a signature of its own attempt.
    const ids = alerts[3]!.route.requests.map((r) => String(r.headers["webhook-id"]));
    expect(ids.filter((id, i) => ids.indexOf(id) !== i)).toHaveLength(1);
  });

  it("disables the alert once its receiver answers 410 Gone, a test's answer included, as documented", async () => {
    const token = await t.token("alice");
    const wallet = await t.app.inject({ method: "POST", url: "/v1/wallets", headers: bearer(token), payload: { address: randomAddress() } });
    const route = receiver.route("/gone").respond({ status: 410, body: "retired" });
    const created = await t.app.inject({
      method: "POST",
      url: "/v1/risk/alerts",
      headers: bearer(token),
      payload: { walletId: wallet.json().walletId, condition: "unusual_activity", notificationMethod: "webhook", webhookUrl: route.url },
    });
    const { alertId } = created.json<{ alertId: string }>();
    const tested = await t.app.inject({ method: "POST", url: `/v1/risk/alerts/${alertId}/test`, headers: bearer(token) });
    expect(tested.statusCode, tested.body).toBe(202);
    const alert = await waitFor("the alert to be disabled", async () => {
      const res = await t.app.inject({ url: `/v1/risk/alerts/${alertId}`, headers: bearer(token) });
      const body = res.json<{ status: string; disabledReason: string | null }>();
      return body.status === "disabled" ? body : undefined;
    });
    expect(alert.disabledReason).toEqual(expect.any(String));
    expect(route.requests).toHaveLength(1);
    expect(headerErrors("risk_alert.test", route.requests[0]!.headers)).toEqual([]);
  });
});
