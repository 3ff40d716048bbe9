// The README's procedure for replaying refused Helius items (helius_rejected_items), run as
// written there: select the kept items, post them again, delete the rows. An item refused again
// by the replay is not kept a second time (its text is kept already: its row takes the replay's
// errors), so a delete by id alone removed its only copy. The documented delete removes only the
// rows of items now stored, and leaves the one refused again and the one without a readable
// signature.
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { randomAddress, randomSignature } from "../helpers/chain.ts";

const SECRET = "helius-replay-procedure-auth-header-01";
const README = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
const SECTION = README.slice(README.indexOf("### Helius enhanced webhooks"), README.indexOf("### The synthetic feed"));

/** The SQL of the README's `psql "$DATABASE_URL" <flags> "<sql>"` line whose SQL starts with `start`. */
function documentedSql(start: string): string {
  const found = [...SECTION.matchAll(/psql "\$DATABASE_URL" -A?t?c "([^"]+)"/g)].map((match) => match[1]!).find((sql) => sql.startsWith(start));
  if (found === undefined) throw new Error(`the README's Helius section has no psql command starting "${start}"`);
  return found;
}

const T0 = 1_720_000_000;
let clock = new Date(T0 * 1000);
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp("helius-replay-procedure", { HELIUS_AUTH_HEADER: SECRET }, { now: () => clock });
});
afterAll(async () => {
  await t.close();
});

const post = (body: string) =>
  t.app.inject({ method: "POST", url: "/v1/ingest/helius", headers: { authorization: SECRET, "content-type": "application/json" }, payload: body });

const item = (over: object) => ({
  signature: randomSignature(),
  slot: 280_000_000,
  timestamp: T0 - 60,
  fee: 5000,
  feePayer: randomAddress(),
  type: "TRANSFER",
  nativeTransfers: [{ fromUserAccount: randomAddress(), toUserAccount: randomAddress(), amount: 1_500_000_000 }],
  ...over,
});

describe("the README's replay of refused Helius items", () => {
  it("deletes the row of an item the replay stored, and keeps those refused again, with or without a readable signature", async () => {
    // Refused for a cause that passes (its time is an hour ahead of the clock), for one that does not, and unreadable.
    const ahead = item({ timestamp: T0 + 3_600 });
    const negativeFee = item({ fee: -1 });
    const unreadable = item({ signature: "not a signature" });
    const first = await post(JSON.stringify([ahead, negativeFee, unreadable]));
    expect(first.statusCode, first.body).toBe(202);
    expect(first.json()).toMatchObject({ accepted: 0, rejected: [{ index: 0 }, { index: 1 }, { index: 2 }] });
    const ids = (await t.deps.sql<{ id: number }[]>`select id from helius_rejected_items order by id`).map((row) => row.id);
    expect(ids).toHaveLength(3);

    // Two hours on, the first item's time is past: its cause is fixed.
    clock = new Date((T0 + 7_200) * 1000);
    const listed = (sql: string) => sql.replaceAll("(…)", `(${ids.join(",")})`);
    const [selected] = await t.deps.sql.unsafe(listed(documentedSql("select json_agg(item order by id)")));
    const replay = await post(JSON.stringify(Object.values(selected!)[0]));
    expect(replay.statusCode, replay.body).toBe(202);
    // What the README says to read: the two refused still (the kept rows' order is theirs, not the delivery's).
    const answer = replay.json() as { accepted: number; rejected: { signature?: string; errors: unknown[] }[] };
    expect(answer.accepted).toBe(1);
    expect(answer.rejected.map((r) => r.signature ?? null).sort()).toEqual([negativeFee.signature, null].sort());

    // The row of the item refused again holds the replay's errors, as the answer does, and counts both refusals.
    const [again] = await t.deps.sql`select errors, refusals from helius_rejected_items where signature = ${negativeFee.signature}`;
    expect(again).toEqual({ errors: answer.rejected.find((r) => r.signature === negativeFee.signature)!.errors, refusals: 2 });

    await t.deps.sql.unsafe(listed(documentedSql("delete from helius_rejected_items")));
    const left = await t.deps.sql<{ signature: string | null }[]>`select signature from helius_rejected_items order by signature nulls last`;
    expect(left.map((row) => row.signature)).toEqual([negativeFee.signature, null]);
    expect((await t.deps.sql`select signature from transactions`).map((row) => row.signature)).toEqual([ahead.signature]);
  });
});
