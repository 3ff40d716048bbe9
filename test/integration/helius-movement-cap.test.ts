// A Helius delivery stores at most 10,000 movements. Without a bound, one 10 MiB delivery became
// some 75,000–110,000 rows: seconds of the event loop, an insert outlasting REQUEST_TIMEOUT
// (answered 503 while the rows still landed, so Helius sent it all again). The items past the
// bound are refused unread, each listed in `rejected` and kept — not the delivery, which Helius
// would drop whole after three retries — and stored when posted again in a smaller delivery.
//
// The bound is filled here by items refused for their time (an hour ahead of the clock): read,
// so counted, but storing no row, which keeps the test from writing 10,000 rows.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_MOVEMENTS_PER_DELIVERY, pastMovementsMessage } from "../../src/ingest/helius-triage.ts";
import { randomAddress, randomSignature } from "../helpers/chain.ts";
import { startLoggedApp, type LoggedApp } from "../helpers/logged-app.ts";

const SECRET = "helius-movement-cap-auth-header-01234";
let logged: LoggedApp;

beforeAll(async () => {
  logged = await startLoggedApp("helius-movement-cap", { HELIUS_AUTH_HEADER: SECRET }, "warn");
  await logged.app.ready();
});
afterAll(async () => {
  await logged.close();
});

const post = (items: unknown[]) =>
  logged.app.inject({ method: "POST", url: "/v1/ingest/helius", headers: { authorization: SECRET }, payload: items as object[] });

const [from, to] = [randomAddress(), randomAddress()];
/** An item of `transfers` native transfers (one pair of addresses: a cheap check). */
const item = (transfers: number, timestamp = 1_720_000_000) => ({
  signature: randomSignature(),
  slot: 280_000_000,
  timestamp,
  fee: 5000,
  feePayer: from,
  type: "TRANSFER",
  nativeTransfers: Array.from({ length: transfers }, () => ({ fromUserAccount: from, toUserAccount: to, amount: 1_000_000 })),
});

const signatures = async (table: "transactions" | "helius_rejected_items") =>
  (await logged.deps.sql<{ signature: string }[]>`select distinct signature from ${logged.deps.sql(table)}`).map((row) => row.signature).sort();

describe(`a Helius delivery of more than ${MAX_MOVEMENTS_PER_DELIVERY} movements`, () => {
  const ahead = Math.floor(Date.now() / 1000) + 3_600;
  const first = item(1);
  // 1 + 9 × 1,000 + 999 = 10,000: up to the bound, read (and refused for their time).
  const filling = [...Array.from({ length: 9 }, () => item(1_000, ahead)), item(999, ahead)];
  const past = [item(1), item(2)];
  const delivery = [first, ...filling, ...past];

  it("stores the items before the bound, refuses the rest unread and keeps them, answering 202", async () => {
    const res = await post(delivery);
    expect(res.statusCode, res.body).toBe(202);
    const answer = res.json() as { accepted: number; duplicates: number; skipped: number; rejected: { index: number; errors: unknown[] }[] };
    expect([answer.accepted, answer.duplicates, answer.skipped, answer.rejected.length]).toEqual([1, 0, 0, 12]);
    // The filling items for their time, the two past the bound for the bound alone.
    expect(answer.rejected.slice(0, 10).map((r) => (r.errors[0] as { path: string }).path)).toEqual(
      Array.from({ length: 10 }, (_, i) => `body.${i + 1}.timestamp`),
    );
    expect(answer.rejected.slice(10)).toEqual([
      { index: 11, signature: past[0]!.signature, errors: [{ path: "body.11", message: pastMovementsMessage(MAX_MOVEMENTS_PER_DELIVERY) }] },
      { index: 12, signature: past[1]!.signature, errors: [{ path: "body.12", message: pastMovementsMessage(MAX_MOVEMENTS_PER_DELIVERY) }] },
    ]);
    expect(await signatures("transactions")).toEqual([first.signature]);
    expect(await signatures("helius_rejected_items")).toEqual([...filling, ...past].map((i) => i.signature).sort());

    const warned = logged.lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line.level === 40);
    expect(warned).toHaveLength(1);
    expect(warned[0]).toMatchObject({ refused: 12, items: 13, unread: 2, maxMovements: MAX_MOVEMENTS_PER_DELIVERY });
  });

  it("stores the items refused past the bound when they are posted again in a smaller delivery, from their kept rows", async () => {
    const kept = await logged.deps.sql`select item from helius_rejected_items where signature in ${logged.deps.sql(past.map((i) => i.signature))}`;
    const res = await post(kept.map((row) => row.item as object));
    expect(res.statusCode, res.body).toBe(202);
    expect(res.json()).toEqual({ accepted: 2, duplicates: 0, skipped: 0, rejected: [] });
    expect(await signatures("transactions")).toEqual([first, ...past].map((i) => i.signature).sort());
  });
});
