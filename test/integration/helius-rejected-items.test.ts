// One Helius item we cannot read no longer costs its delivery: Helius retries a non-2xx three
// times and then drops every item of it. The valid items are stored, the refused one is
// answered in `rejected`, kept whole in helius_rejected_items and logged once; a replay of the
// delivery stores nothing new anywhere.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Deps } from "../../src/deps.ts";
import type { AppInstance } from "../../src/http/app.ts";
import type { HeliusTransaction } from "../../src/ingest/helius.ts";
import { MAX_KEPT_DEPTH } from "../../src/db/queries/helius-rejected-items.ts";
import { startLoggedApp, type LoggedApp } from "../helpers/logged-app.ts";
import { randomAddress, randomSignature } from "../helpers/chain.ts";

const SECRET = "helius-rejected-items-auth-header-0123";
let logged: LoggedApp;
let lines: string[];
let deps: Deps;
let app: AppInstance;

beforeAll(async () => {
  logged = await startLoggedApp("helius-rejected-items", { HELIUS_AUTH_HEADER: SECRET }, "warn");
  ({ app, deps, lines } = logged);
});
afterAll(async () => {
  await logged.close();
});

const post = (items: unknown[]) =>
  app.inject({ method: "POST", url: "/v1/ingest/helius", headers: { authorization: SECRET }, payload: items as object[] });

const transfer = (): HeliusTransaction & { description: string } => ({
  signature: randomSignature(),
  slot: 280_000_000,
  timestamp: 1_720_000_000,
  fee: 5000,
  feePayer: randomAddress(),
  type: "TRANSFER",
  transactionError: null,
  nativeTransfers: [{ fromUserAccount: randomAddress(), toUserAccount: randomAddress(), amount: 1_500_000_000 }],
  tokenTransfers: [],
  description: "an unknown field, ignored",
});

const count = async (table: "transactions" | "helius_rejected_items") =>
  Number((await deps.sql`select count(*)::int as n from ${deps.sql(table)}`)[0]!.n);

const warnings = () => lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line.level === 40);

describe("a Helius delivery with an item the webhook cannot read", () => {
  // Lamports as a string: a shape Helius could drift into, which we do not read.
  const refused = { ...transfer(), nativeTransfers: [{ fromUserAccount: randomAddress(), toUserAccount: randomAddress(), amount: "5000000" }] };
  const delivery: unknown[] = Array.from({ length: 100 }, (_, i) => (i === 57 ? refused : transfer()));
  const answer = {
    skipped: 0,
    rejected: [{ index: 57, signature: refused.signature, errors: [{ path: "body.57.nativeTransfers.0.amount", message: "must be a whole number" }] }],
  };

  it("stores the 99 valid items, answers 202 naming the refused one, keeps it whole and logs one warning", async () => {
    const res = await post(delivery);
    expect(res.statusCode, res.body).toBe(202);
    expect(res.json()).toEqual({ accepted: 99, duplicates: 0, ...answer });
    expect(await count("transactions")).toBe(99);
    const [row] = await deps.sql`select signature, errors, item, received_at from helius_rejected_items`;
    expect(row).toMatchObject({ signature: refused.signature, errors: answer.rejected[0]!.errors, item: refused });
    expect(await count("helius_rejected_items")).toBe(1);

    const warned = warnings();
    expect(warned).toHaveLength(1);
    expect(warned[0]).toMatchObject({ refused: 1, items: 100, signatures: [refused.signature] });
    expect(JSON.stringify(warned[0])).not.toContain(SECRET);
  });

  it("stores nothing new, in either table, when Helius delivers it again, and counts the refused item's second refusal on its row", async () => {
    const res = await post(delivery);
    expect(res.statusCode).toBe(202);
    expect(res.json()).toEqual({ accepted: 0, duplicates: 99, ...answer });
    expect(await count("transactions")).toBe(99);
    expect(await count("helius_rejected_items")).toBe(1);
    const [row] = await deps.sql`select errors, refusals, last_refused_at > received_at as "refusedSince" from helius_rejected_items`;
    expect(row).toEqual({ errors: answer.rejected[0]!.errors, refusals: 2, refusedSince: true });
  });

  it("answers 202 to a delivery whose every item is refused, keeping each, one without a readable signature and one holding a NUL", async () => {
    const noSignature = { ...transfer(), signature: 42 };
    // jsonb could not hold this string; the json column keeps it as sent.
    const withNul = { ...transfer(), fee: -1, description: "Mad Lad #1\u0000\u0000\u0000" };
    const res = await post([noSignature, withNul]);
    expect(res.statusCode, res.body).toBe(202);
    expect(res.json()).toMatchObject({ accepted: 0, duplicates: 0, skipped: 0, rejected: [{ index: 0 }, { index: 1, signature: withNul.signature }] });
    expect(res.json().rejected[0]).not.toHaveProperty("signature");
    const kept = await deps.sql`select signature, item::text as item from helius_rejected_items where signature is null or signature = ${withNul.signature} order by signature nulls first`;
    expect(kept.map((row) => [row.signature, JSON.parse(row.item as string)])).toEqual([
      [null, noSignature],
      [withNul.signature, withNul],
    ]);
    expect(await count("transactions")).toBe(99);
  });

  it("answers 202 to a delivery holding an item nested too deep to write out, storing the valid one and keeping a note of the refused one", async () => {
    const valid = transfer();
    const deepSignature = randomSignature();
    // Written by hand: JSON.stringify itself overflows the stack at this depth.
    const depth = 5_000;
    const deep = `{"signature":"${deepSignature}","junk":${"[".repeat(depth)}${"]".repeat(depth)}}`;
    const res = await app.inject({
      method: "POST",
      url: "/v1/ingest/helius",
      headers: { authorization: SECRET, "content-type": "application/json" },
      payload: `[${JSON.stringify(valid)},${deep}]`,
    });
    expect(res.statusCode, res.body).toBe(202);
    expect(res.json()).toMatchObject({ accepted: 1, rejected: [{ index: 1, signature: deepSignature }] });
    const [kept] = await deps.sql`select item::text as item from helius_rejected_items where signature = ${deepSignature}`;
    expect(JSON.parse(kept!.item as string)).toEqual({ notKept: `the item nests deeper than ${MAX_KEPT_DEPTH} levels`, signature: deepSignature });
    expect(await count("transactions")).toBe(100);
  });

  it("keeps whole a refused item nested as deep as the limit allows", async () => {
    const signature = randomSignature();
    const depth = MAX_KEPT_DEPTH - 1;
    const item = `{"signature":"${signature}","junk":${"[".repeat(depth - 1)}${"]".repeat(depth - 1)}}`;
    const res = await app.inject({
      method: "POST",
      url: "/v1/ingest/helius",
      headers: { authorization: SECRET, "content-type": "application/json" },
      payload: `[${item}]`,
    });
    expect(res.statusCode, res.body).toBe(202);
    const [kept] = await deps.sql`select item::text as item from helius_rejected_items where signature = ${signature}`;
    expect(kept!.item).toBe(item);
  });
});
