// The OpenAPI document names the API's resources: each is a schema under components.schemas,
// and every operation that answers with one references it by $ref, so that a client generated
// from the document has a WalletSummary or a RiskAlert type (not ListWallets200ResponseWalletsInner,
// nor operations["listWallets"]["responses"][200]…). The serializer resolves the same $refs:
// answers keep every field of the named schema.
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormatsPlugin from "ajv-formats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { bearer, trackWallet } from "../helpers/seed.ts";

type Schema = { $ref?: string; type?: unknown; properties?: Record<string, Schema>; items?: Schema; required?: string[]; [keyword: string]: unknown };
type Operation = { responses: Record<string, { content?: Record<string, { schema?: Schema }> }> };
type Document = { paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, Schema> } };

/** The resources, in the order components.schemas lists them (after Problem). */
const RESOURCES = [
  "WalletSummary",
  "WalletDetail",
  "Transaction",
  "RiskAlert",
  "CreatedRiskAlert",
  "AlertEvent",
  "AlertChange",
  "WalletEvent",
  "Notification",
  "NotificationSummary",
];
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
// ajv-formats is CommonJS; under NodeNext its default import is the module object's type.
const addFormats = addFormatsPlugin as unknown as (ajv: Ajv2020) => Ajv2020;

let t: TestApp;
let document: Document;

beforeAll(async () => {
  t = await startTestApp("openapi-named-schemas");
  document = (await t.app.inject({ url: "/v1/openapi.json" })).json<Document>();
});
afterAll(async () => {
  await t?.close();
});

/** The schema of an operation's success answer, as the document gives it. */
const answerOf = (method: string, path: string, status: number): Schema | undefined =>
  document.paths[path]?.[method]?.responses[String(status)]?.content?.["application/json"]?.schema;

describe("the OpenAPI document's named schemas", () => {
  it("lists Problem and each resource under components.schemas, by name (no def-0)", () => {
    expect(Object.keys(document.components.schemas)).toEqual(["Problem", ...RESOURCES]);
  });

  it("references each resource from the operations that answer with it", () => {
    const items = (schema: Schema | undefined, property: string) => schema?.properties?.[property]?.items;
    expect(items(answerOf("get", "/v1/wallets", 200), "wallets")).toEqual(ref("WalletSummary"));
    expect(answerOf("get", "/v1/wallets/{walletId}", 200)).toEqual(ref("WalletDetail"));
    expect(answerOf("post", "/v1/wallets", 201)).toEqual(ref("WalletDetail"));
    expect(answerOf("patch", "/v1/wallets/{walletId}", 200)).toEqual(ref("WalletDetail"));
    expect(items(answerOf("get", "/v1/transactions", 200), "transactions")).toEqual(ref("Transaction"));
    expect(items(answerOf("get", "/v1/risk/alerts", 200), "alerts")).toEqual(ref("RiskAlert"));
    expect(answerOf("get", "/v1/risk/alerts/{alertId}", 200)).toEqual(ref("RiskAlert"));
    expect(answerOf("patch", "/v1/risk/alerts/{alertId}", 200)).toEqual(ref("RiskAlert"));
    expect(answerOf("post", "/v1/risk/alerts", 201)).toEqual(ref("CreatedRiskAlert"));
    expect(items(answerOf("get", "/v1/risk/alerts/{alertId}/events", 200), "events")).toEqual(ref("AlertEvent"));
    expect(items(answerOf("get", "/v1/risk/alerts/{alertId}/history", 200), "history")).toEqual(ref("AlertChange"));
    expect(items(answerOf("get", "/v1/wallets/{walletId}/events", 200), "events")).toEqual(ref("WalletEvent"));
    expect(answerOf("get", "/v1/notifications/{notificationId}", 200)).toEqual(ref("Notification"));
    expect(items(answerOf("get", "/v1/risk/alerts/{alertId}/notifications", 200), "notifications")).toEqual(ref("NotificationSummary"));
  });

  it("resolves every $ref of the document, and references every named schema", () => {
    const refs = [...JSON.stringify(document).matchAll(/"\$ref":"([^"]+)"/g)].map((match) => match[1]!);
    const unresolved = refs.filter((pointer) => {
      const path = pointer.replace(/^#\//, "").split("/");
      let node: unknown = document;
      for (const segment of path) node = (node as Record<string, unknown> | undefined)?.[segment.replaceAll("~1", "/").replaceAll("~0", "~")];
      return !pointer.startsWith("#/") || node === undefined;
    });
    expect(unresolved).toEqual([]);
    const referenced = new Set(refs.filter((pointer) => pointer.startsWith("#/components/schemas/")).map((pointer) => pointer.split("/").pop()));
    expect(Object.keys(document.components.schemas).filter((name) => !referenced.has(name))).toEqual([]);
  });

  it("gives each named schema its fields: a Notification its attempts, a CreatedRiskAlert its webhookSecret, and each a description", () => {
    const { schemas } = document.components;
    expect(Object.keys(schemas.Notification!.properties!)).toContain("attempts");
    expect(schemas.Notification!.properties!.attempts!.items!.properties).toHaveProperty("destination");
    expect(Object.keys(schemas.NotificationSummary!.properties!)).not.toContain("attempts");
    expect(Object.keys(schemas.CreatedRiskAlert!.properties!).sort()).toEqual([...Object.keys(schemas.RiskAlert!.properties!), "webhookSecret"].sort());
    expect(schemas.CreatedRiskAlert!.required).not.toContain("webhookSecret");
    for (const name of RESOURCES) {
      expect(schemas[name], name).toMatchObject({ type: "object", description: expect.any(String) });
      expect(schemas[name], name).not.toHaveProperty("$id");
    }
  });

  it("holds each named schema to JSON Schema 2020-12, as OpenAPI 3.1 reads it (Ajv, strict)", () => {
    const ajv = new Ajv2020({ strict: true, allowUnionTypes: true });
    addFormats(ajv);
    ajv.addVocabulary(["example", "xml", "externalDocs", "discriminator"]);
    const $defs = JSON.parse(JSON.stringify(document.components.schemas).replaceAll('"#/components/schemas/', '"#/$defs/')) as Record<string, Schema>;
    for (const name of Object.keys($defs)) expect(() => ajv.compile({ $ref: `#/$defs/${name}`, $defs }), name).not.toThrow();
  });

  it("answers with every field of the named schema: the serializer resolves the $ref to it", async () => {
    const token = await t.token("named");
    const created = await trackWallet(t, token, { alias: "treasury", tags: ["cold"] });
    const { schemas } = document.components;
    expect(Object.keys(created).sort()).toEqual(Object.keys(schemas.WalletDetail!.properties!).sort());
    const detail = await t.app.inject({ url: `/v1/wallets/${created.walletId}`, headers: bearer(token) });
    expect(detail.json()).toEqual(created);
    const list = await t.app.inject({ url: "/v1/wallets", headers: bearer(token) });
    const [summary] = list.json<{ wallets: Record<string, unknown>[] }>().wallets;
    expect(Object.keys(summary!).sort()).toEqual(Object.keys(schemas.WalletSummary!.properties!).sort());
    expect(summary).toMatchObject({ walletId: created.walletId, address: created.address, alias: "treasury", lastActivity: null, balanceAsOf: null });
  });
});
