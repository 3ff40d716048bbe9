// README's scrub of a recipient (Erasing a caller), run with psql as written there: an email
// address or number that alerts sent to leaves every row (live, archived, in the history, in a
// provider's refusal), the rows themselves stay, and an address that merely ends with it (another
// person's) is left alone. It refuses to run while an alert still sends to the address.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { everyRow, makeFootprint, rowsHolding, startFootprintRig, type Footprint, type FootprintRig } from "../helpers/caller-footprint.ts";
import { runPsql } from "../helpers/psql.ts";
import { readmeSqlBlock } from "../helpers/readme-sql.ts";
import { bearer } from "../helpers/seed.ts";

const SCRUB = readmeSqlBlock("### Erasing a caller", "Scrub a recipient:");
const JANE = "jane@fund.example";
/** Bob's analyst, whose address ends with Jane's. */
const MARY = "mary.jane@fund.example";

let rig: FootprintRig;
let alice: Footprint;
let bob: Footprint;

beforeAll(async () => {
  rig = await startFootprintRig("recipient-scrub");
  // Jane is alice's analyst: her address is the alerts' recipient and the token's email claim (owner_email).
  alice = await makeFootprint(rig, "alice-desk-scrub", {
    ownerEmail: JANE,
    email: JANE,
    laterEmail: "alice.desk@fund.example",
    phone: "+14155550161",
    laterPhone: "+14155550162",
  });
  bob = await makeFootprint(rig, "bob-desk-scrub", {
    ownerEmail: "bob.owner@fund.example",
    email: MARY,
    laterEmail: "bob.desk@fund.example",
    phone: "+14155550171",
    laterPhone: "+14155550172",
  });
}, 120_000);
afterAll(async () => {
  await rig?.close();
});

const scrub = (addr: string) => runPsql(rig.t.config.databaseUrl, SCRUB, { addr });

/** The rows that still hold `address` as a whole address (Mary's, which ends with Jane's, taken out first). */
const rowsHoldingWhole = (rows: Map<string, string[]>, address: string) =>
  rowsHolding(new Map([...rows].map(([table, texts]) => [table, texts.map((text) => text.toLowerCase().replaceAll(MARY, ""))])), [address]);

const rowCounts = (rows: Map<string, string[]>) => Object.fromEntries([...rows].map(([table, texts]) => [table, texts.length]));

describe("the README's scrub of a recipient", () => {
  it("refuses, changing nothing, while an alert still sends to the address, and names it", async () => {
    const res = await rig.t.app.inject({
      method: "POST",
      url: "/v1/risk/alerts",
      headers: bearer(alice.token),
      payload: { walletId: (await rig.t.deps.sql`select id from tracked_wallets where owner = ${alice.sub}`)[0]!.id, condition: "large_transfer", threshold: 5_000, notificationMethod: "email", recipient: JANE },
    });
    expect(res.statusCode).toBe(201);
    const stillSending = res.json<{ alertId: string }>().alertId;
    const before = await everyRow(rig.t);

    const run = await scrub(JANE);
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain(`alerts still send to it: ${stillSending} of ${alice.sub}`);
    expect(await everyRow(rig.t)).toEqual(before);

    // Its owner deletes it (a PATCH would do as well): the next test scrubs.
    expect((await rig.t.app.inject({ method: "DELETE", url: `/v1/risk/alerts/${stillSending}`, headers: bearer(alice.token) })).statusCode).toBe(204);
  });

  it("takes the address, in any letter case, out of every row, keeps the rows, and leaves an address that ends with it", async () => {
    const before = await everyRow(rig.t);
    const holding = rowsHoldingWhole(before, JANE);
    // Where Jane's address was: live, archived, in the history, and in the SMTP server's refusal.
    for (const table of ["alerts", "notifications", "delivery_attempts", "deleted_alerts", "deleted_notifications", "deleted_delivery_attempts", "alert_changes"]) {
      expect(holding.some((row) => row.startsWith(`${table}:`)), table).toBe(true);
    }
    expect(holding.some((row) => row.startsWith("delivery_attempts:") && row.includes(`<${JANE}>: recipient address rejected`))).toBe(true);
    const bobsBefore = rowsHolding(before, [...bob.ids, ...bob.personal]);
    expect(rowsHolding(before, [MARY]).length).toBeGreaterThan(5);

    const run = await scrub(JANE.toUpperCase());
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);

    const after = await everyRow(rig.t);
    expect(rowsHoldingWhole(after, JANE)).toEqual([]);
    expect(rowCounts(after)).toEqual(rowCounts(before));
    expect(rowsHolding(after, [...bob.ids, ...bob.personal])).toEqual(bobsBefore);
    expect(rowsHolding(after, ["<erased>: Recipient address rejected"])).toHaveLength(1);
    expect((await rig.t.deps.sql`select owner_email from alerts where owner = ${alice.sub}`).map((row) => row.owner_email)).toEqual([null, null, null]);
    // The history still reads, the address replaced.
    const history = await rig.t.app.inject({ url: `/v1/risk/alerts/${alice.emailAlertId}/history`, headers: bearer(alice.token) });
    expect(history.json<{ history: { changes: Record<string, unknown> }[] }>().history.map((entry) => entry.changes.recipient)).toEqual([
      [null, "erased"],
      ["erased", "alice.desk@fund.example"],
    ]);
  });

  it("takes a number out the same way", async () => {
    const before = await everyRow(rig.t);
    expect(rowsHolding(before, [alice.contacts.phone]).length).toBeGreaterThan(0);

    const run = await scrub(alice.contacts.phone);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);

    const after = await everyRow(rig.t);
    expect(rowsHolding(after, [alice.contacts.phone])).toEqual([]);
    expect(rowCounts(after)).toEqual(rowCounts(before));
    expect(rowsHolding(after, [alice.contacts.laterPhone]).length).toBe(rowsHolding(before, [alice.contacts.laterPhone]).length);
  });
});
