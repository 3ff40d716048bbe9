import { Type } from "@fastify/type-provider-typebox";
import { describe, expect, it } from "vitest";
import { BODY_LIMIT, INGEST_BODY_LIMIT } from "../../src/http/app.ts";
import { BYTES_PER_CONTAINER, CONTAINER_SLACK, containerBound, maxContainers } from "../../src/http/json-container-bound.ts";
import { MAX_JSON_DEPTH, scanJsonText } from "../../src/http/json-text-scan.ts";
import { IngestAccountsBodySchema, IngestTransactionsBodySchema, MAX_BATCH_ACCOUNTS, MAX_BATCH_TRANSACTIONS } from "../../src/ingest/native.ts";

const closed = { additionalProperties: false } as const;

describe("maxContainers", () => {
  it("counts an object as one plus its fields', and an array as one plus its items' up to maxItems", () => {
    const item = Type.Object({ c: Type.Number() }, closed);
    expect(maxContainers(Type.Object({ a: Type.String(), b: Type.Array(item, { maxItems: 3 }) }, closed))).toBe(1 + 1 + 3);
    expect(maxContainers(Type.Object({ a: Type.Optional(Type.Object({}, closed)) }, closed))).toBe(2);
    // Items that hold none leave the array at one, however many.
    expect(maxContainers(Type.Array(Type.String()))).toBe(1);
    expect(maxContainers(Type.String())).toBe(0);
  });

  it("takes the widest branch of a union and of a type list, and the narrowest of an intersection", () => {
    const two = Type.Object({ a: Type.Object({}, closed) }, closed);
    expect(maxContainers(Type.Union([two, Type.Null(), Type.String()]))).toBe(2);
    expect(maxContainers({ type: ["array", "null"], items: two, maxItems: 4 })).toBe(1 + 4 * 2);
    expect(maxContainers({ allOf: [{ type: "array", items: two, maxItems: 4 }, { type: "array", items: two, maxItems: 2 }] })).toBe(1 + 2 * 2);
    expect(maxContainers(Type.Enum({ a: "a", b: "b" }))).toBe(0);
    expect(maxContainers({ const: [{ a: 1 }] })).toBe(2);
  });

  it("takes as unbounded what does not bound it: open objects, arrays of containers without maxItems, refs, untyped schemas", () => {
    expect(maxContainers(Type.Object({ a: Type.String() }))).toBe(Infinity);
    expect(maxContainers(Type.Object({}, { additionalProperties: Type.Object({}) }))).toBe(Infinity);
    expect(maxContainers(Type.Array(Type.Object({}, closed)))).toBe(Infinity);
    expect(maxContainers(Type.Unknown())).toBe(Infinity);
    expect(maxContainers(Type.Ref("Problem"))).toBe(Infinity);
    expect(maxContainers(true)).toBe(Infinity);
    // Unknown keys that may hold only scalars add none.
    expect(maxContainers(Type.Object({}, { additionalProperties: Type.String() }))).toBe(1);
  });

  it("counts a full native transactions batch: the body, its list and one object per transaction", () => {
    expect(maxContainers(IngestTransactionsBodySchema)).toBe(2 + MAX_BATCH_TRANSACTIONS);
  });
});

describe("containerBound", () => {
  it("allows twice the schema's most and the slack, at most one per BYTES_PER_CONTAINER bytes of the body limit", () => {
    const wallet = Type.Object({ address: Type.String(), tags: Type.Array(Type.String(), { maxItems: 20 }) }, closed);
    expect(containerBound(wallet, BODY_LIMIT)).toBe(2 * 2 + CONTAINER_SLACK);
    expect(containerBound(IngestTransactionsBodySchema, INGEST_BODY_LIMIT)).toBe(2 * (2 + MAX_BATCH_TRANSACTIONS) + CONTAINER_SLACK);
    expect(containerBound(Type.Unknown(), BODY_LIMIT)).toBe(BODY_LIMIT / BYTES_PER_CONTAINER);
    expect(containerBound(IngestAccountsBodySchema, INGEST_BODY_LIMIT)).toBe(INGEST_BODY_LIMIT / BYTES_PER_CONTAINER);
  });

  it("bounds a route without a body schema as a body of one ({}, which such a route accepts)", () => {
    expect(containerBound(undefined, BODY_LIMIT)).toBe(2 + CONTAINER_SLACK);
  });

  it("holds the densest accounts batch the body limit lets through: empty snapshots, then the shortest token accounts", () => {
    // Denser than any batch the route stores: every mint is the shortest address (32 characters), repeated.
    const mint = "1".repeat(32);
    const tokenAccount = `{"mint":"${mint}","symbol":"","balance":0,"usdValue":0}`;
    const snapshot = (i: number, items: number) =>
      `{"address":"${mint}","balance":${i},"tokenAccounts":[${Array(items).fill(tokenAccount).join(",")}],"nfts":[]}`;
    const empties = Array.from({ length: MAX_BATCH_ACCOUNTS - 1 }, (_, i) => snapshot(i, 0));
    const frame = `{"accounts":[${empties.join(",")},${snapshot(0, 0)}]}`;
    const items = Math.floor((INGEST_BODY_LIMIT - frame.length) / (tokenAccount.length + 1));
    const body = `{"accounts":[${empties.join(",")},${snapshot(0, items)}]}`;
    expect(body.length).toBeLessThanOrEqual(INGEST_BODY_LIMIT);
    expect(body.length).toBeGreaterThan(INGEST_BODY_LIMIT - tokenAccount.length - 1);
    // The 80 bytes json-container-bound.ts reckons an item takes at least.
    expect(tokenAccount.length).toBe(80);
    const bound = containerBound(IngestAccountsBodySchema, INGEST_BODY_LIMIT);
    const scan = scanJsonText(body, { maxDepth: MAX_JSON_DEPTH, maxContainers: bound });
    if (scan.exceeds !== null) throw new Error(`the densest accounts batch goes past the ${scan.exceeds} bound`);
    // 3 per snapshot and one per token account (about 131,000): the bound is not far looser than it need be.
    expect(scan.containers).toBe(2 + 3 * MAX_BATCH_ACCOUNTS + items);
    expect(scan.containers).toBeGreaterThan(bound * 0.75);
  });
});
