// An item refused again (Helius retrying its delivery, or an operator's replay after fixing one
// cause) kept its first refusal's errors in helius_rejected_items while the answer had the
// current ones: after a fix, the table still gave the old reason for an item now refused for
// another. Now each refusal of an item kept already records its current errors, counts itself
// (`refusals`) and dates itself (`last_refused_at`), and `received_at` stays the first refusal's
// time. An item accepted later leaves its row as its last refusal wrote it, for the README's
// delete to remove.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_MOVEMENTS_PER_DELIVERY, pastMovementsMessage } from "../../src/ingest/helius-triage.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { randomAddress, randomSignature } from "../helpers/chain.ts";
import { fromDatabaseMigratedUpTo } from "../helpers/migrated-up-to.ts";

const SECRET = "helius-refused-again-auth-header-0123";
const T0 = 1_720_000_000;
let clock = new Date(T0 * 1000);
let t: TestApp;

beforeAll(async () => {
  t = await startTestApp("helius-refused-again", { HELIUS_AUTH_HEADER: SECRET }, { now: () => clock });
});
afterAll(async () => {
  await t.close();
});

type Answer = { accepted: number; duplicates: number; skipped: number; rejected: { index: number; signature?: string; errors: unknown[] }[] };

async function post(items: unknown[]): Promise<Answer> {
  const res = await t.app.inject({ method: "POST", url: "/v1/ingest/helius", headers: { authorization: SECRET }, payload: items as object[] });
  expect(res.statusCode, res.body).toBe(202);
  return res.json() as Answer;
}

const [from, to] = [randomAddress(), randomAddress()];
/** An item of `transfers` native transfers between one pair of addresses (a cheap check). */
const item = (transfers: number, over: object = {}) => ({
  signature: randomSignature(),
  slot: 280_000_000,
  timestamp: T0 - 60,
  fee: 5000,
  feePayer: from,
  type: "TRANSFER",
  nativeTransfers: Array.from({ length: transfers }, () => ({ fromUserAccount: from, toUserAccount: to, amount: 1_000_000 })),
  ...over,
});

type KeptRow = { id: number; errors: unknown[]; refusals: number; firstMicros: number; lastMicros: number; item: unknown };

/** The item's one row; times in microseconds, as Postgres keeps them (a Date would round them to milliseconds). */
async function keptRow(signature: string): Promise<KeptRow> {
  const rows = await t.deps.sql<KeptRow[]>`
    select id::float8 as id, errors, refusals, item,
           (extract(epoch from received_at) * 1000000)::float8 as "firstMicros",
           (extract(epoch from last_refused_at) * 1000000)::float8 as "lastMicros"
    from helius_rejected_items where signature = ${signature}`;
  expect(rows).toHaveLength(1);
  return rows[0]!;
}

describe("a Helius item refused again", () => {
  it("records its current refusal (errors, count, time) over an earlier one for another reason, keeping its first refusal's time", async () => {
    // An hour ahead of the clock: refused for its time once read.
    const ahead = T0 + 3_600;
    // 10 × 1,000 movements: the bound, read (and refused for their time), so that the item after them is refused unread.
    const filling = Array.from({ length: 10 }, () => item(1_000, { timestamp: ahead }));
    const refusedTwice = item(1, { timestamp: ahead });
    const pastBound = [{ path: "body.10", message: pastMovementsMessage(MAX_MOVEMENTS_PER_DELIVERY) }];

    const first = await post([...filling, refusedTwice]);
    expect(first.rejected.at(-1)).toEqual({ index: 10, signature: refusedTwice.signature, errors: pastBound });
    const once = await keptRow(refusedTwice.signature);
    expect(once).toMatchObject({ errors: pastBound, refusals: 1 });
    expect(once.lastMicros).toBe(once.firstMicros);

    // The bound's cause fixed (posted alone, from its row), it is read now, and refused for its time.
    const second = await post([once.item]);
    expect(second.accepted).toBe(0);
    expect(second.rejected).toEqual([{ index: 0, signature: refusedTwice.signature, errors: [{ path: "body.0.timestamp", message: expect.stringContaining("ahead of this server's clock") }] }]);
    const twice = await keptRow(refusedTwice.signature);
    expect(twice).toMatchObject({ id: once.id, errors: second.rejected[0]!.errors, refusals: 2, item: once.item });
    expect(twice.firstMicros).toBe(once.firstMicros);
    expect(twice.lastMicros).toBeGreaterThan(once.lastMicros);
  });

  it("counts a delivery holding the same refused item twice as one refusal, recorded with the first copy's errors", async () => {
    const negativeFee = item(1, { fee: -1 });
    const first = await post([negativeFee, negativeFee]);
    expect(first.rejected.map((r) => r.index)).toEqual([0, 1]);
    expect(await keptRow(negativeFee.signature)).toMatchObject({ errors: first.rejected[0]!.errors, refusals: 1 });

    // Helius sending the same delivery again: refused again, counted again.
    const retried = await post([negativeFee, negativeFee]);
    expect(retried.rejected).toEqual(first.rejected);
    expect(await keptRow(negativeFee.signature)).toMatchObject({ errors: first.rejected[0]!.errors, refusals: 2 });
  });

  it("counts every one of several deliveries refusing the same items at once, each item in one row", async () => {
    const refused = Array.from({ length: 40 }, () => item(1, { fee: -1 }));
    // Each delivery in its own order: the rows are written in key order whatever it is.
    const deliveries = Array.from({ length: 4 }, (_, n) => [...refused.slice(n * 10), ...refused.slice(0, n * 10)]);
    const answers = await Promise.all(deliveries.map((delivery) => post(delivery)));
    expect(answers.map((answer) => answer.rejected.length)).toEqual([40, 40, 40, 40]);
    const rows = await t.deps.sql<{ refusals: number }[]>`
      select refusals from helius_rejected_items where signature in ${t.deps.sql(refused.map((i) => i.signature))}`;
    expect(rows.map((row) => row.refusals)).toEqual(Array.from({ length: 40 }, () => 4));
  });

  it("leaves the row of an item accepted once its cause is fixed as its last refusal wrote it, for the README's delete", async () => {
    const aheadThenDue = item(1, { timestamp: T0 + 3_600 });
    expect((await post([aheadThenDue])).rejected).toHaveLength(1);
    expect((await post([aheadThenDue])).rejected).toHaveLength(1);
    const refused = await keptRow(aheadThenDue.signature);
    expect(refused.refusals).toBe(2);

    // Two hours on, its time is past: the cause is fixed without editing the item.
    clock = new Date((T0 + 7_200) * 1000);
    try {
      expect(await post([refused.item])).toMatchObject({ accepted: 1, rejected: [] });
    } finally {
      clock = new Date(T0 * 1000);
    }
    expect(await keptRow(aheadThenDue.signature)).toEqual(refused);
    // What the README's delete looks for to remove the row.
    expect(await t.deps.sql`select 1 from transactions where signature = ${aheadThenDue.signature}`).toHaveLength(1);
  });
});

describe("the migration adding refusals and last_refused_at (0021)", () => {
  it("counts each row already kept as refused once, last at its first refusal's time", async () => {
    await fromDatabaseMigratedUpTo(
      20,
      async (old, upgrade) => {
        await old`
          insert into helius_rejected_items (received_at, signature, errors, item, item_sha256)
          values ('2026-01-02T03:04:05.123456Z', 'sig1', '[]', '{"signature":"sig1"}', 'sha-1'),
                 ('2026-02-03T04:05:06.654321Z', null, '[]', '{}', 'sha-2')`;
        await upgrade();
        const rows = await old`
          select item_sha256 as sha, refusals, last_refused_at = received_at as "lastIsFirst"
          from helius_rejected_items order by item_sha256`;
        expect(rows).toEqual([
          { sha: "sha-1", refusals: 1, lastIsFirst: true },
          { sha: "sha-2", refusals: 1, lastIsFirst: true },
        ]);
      },
      { nextTag: "0021_helius-refusals" },
    );
  });
});
