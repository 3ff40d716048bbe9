// A Helius item that gives a key it reads twice ("amount" twice in a transfer) was stored with the
// last value, as JSON.parse reads it. It is refused now, that item alone (the delivery is answered
// 202 and its other items stored, as for any item the webhook cannot read), and kept as sent,
// both values in it: posted again as kept, it is refused again, not stored with the last one.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { HeliusTransaction } from "../../src/ingest/helius.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { randomAddress, randomSignature } from "../helpers/chain.ts";

const SECRET = "helius-repeated-keys-auth-header-0123";
const GIVEN_TWICE = "is given more than once; give it once";
let t: TestApp;

beforeAll(async () => {
  t = await startTestApp("helius-repeated-keys", { HELIUS_AUTH_HEADER: SECRET });
});
afterAll(async () => {
  await t.close();
});

const post = (payload: string) =>
  t.app.inject({ method: "POST", url: "/v1/ingest/helius", headers: { authorization: SECRET, "content-type": "application/json" }, payload });

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

const stored = async (signatures: string[]) =>
  (await t.deps.sql<{ signature: string }[]>`select distinct signature from transactions where signature = any(${signatures}) order by signature`).map((r) => r.signature);
const keptRows = (signature: string) =>
  t.deps.sql<{ item: string; errors: unknown; refusals: number }[]>`select item::text as item, errors, refusals from helius_rejected_items where signature = ${signature}`;

describe("a Helius item that gives a key twice", () => {
  it("refuses only that item when the key is one the service reads, naming it, stores the others, and keeps the item as sent", async () => {
    const items = Array.from({ length: 4 }, transfer);
    const texts = items.map((item) => JSON.stringify(item));
    texts[1] = texts[1]!.replace('"amount":1500000000', '"amount":1500000000,"amount":1500');
    // Twice, but among the fields the service ignores: stored, as an unknown field is.
    texts[2] = texts[2]!.replace('"description":', '"description":"first","description":');
    const res = await post(`[${texts.join(",")}]`);

    expect(res.statusCode, res.body).toBe(202);
    const errors = [{ path: "body.1.nativeTransfers.0.amount", message: GIVEN_TWICE }];
    expect(res.json()).toEqual({ accepted: 3, duplicates: 0, skipped: 0, rejected: [{ index: 1, signature: items[1]!.signature, errors }] });
    const signatures = items.map((item) => item.signature);
    expect(await stored(signatures)).toEqual([signatures[0], signatures[2], signatures[3]].sort());
    expect(await keptRows(items[1]!.signature)).toEqual([{ item: texts[1], errors, refusals: 1 }]);
  });

  it("is refused again when posted again as kept (the README's replay), its row counting the refusal", async () => {
    const item = transfer();
    const text = JSON.stringify(item).replace('"fee":5000', '"fee":5000000,"fee":5000');
    expect((await post(`[${text}]`)).json().rejected).toHaveLength(1);

    const [replay] = await t.deps.sql<{ items: string }[]>`select json_agg(item order by id)::text as items from helius_rejected_items where signature = ${item.signature}`;
    const res = await post(replay!.items);
    expect(res.json()).toMatchObject({ accepted: 0, rejected: [{ index: 0, errors: [{ path: "body.0.fee", message: GIVEN_TWICE }] }] });
    expect(await stored([item.signature])).toEqual([]);
    expect(await keptRows(item.signature)).toEqual([expect.objectContaining({ item: text, refusals: 2 })]);
  });

  it("keeps as sent an item refused for another reason that also gives an ignored key twice", async () => {
    const item = { ...transfer(), slot: -1 };
    const text = JSON.stringify(item).replace('"description":', '"description":"first","description":');
    const res = await post(`[${text}]`);
    expect(res.json().rejected).toEqual([{ index: 0, signature: item.signature, errors: [expect.objectContaining({ path: "body.0.slot" })] }]);
    expect((await keptRows(item.signature))[0]?.item).toBe(text);
  });
});
