// README's "Erasing a caller", run with psql as written there: one transaction that deletes
// everything of one caller (its live wallets and alerts with their record, the archive of its
// deleted alerts, its alerts' history) and keeps its label loads under the name `erased`. The
// database's archive guard (migration 0028) lets the deletes through because that transaction
// says `SET LOCAL wallet_alerts.erasing = 'on'`, and only that transaction: another connection
// meanwhile, and the same session's next transaction, are held to the archive as before.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { everyRow, makeFootprint, rowsHolding, startFootprintRig, type Footprint, type FootprintRig } from "../helpers/caller-footprint.ts";
import { runPsql } from "../helpers/psql.ts";
import { readmeSqlBlock } from "../helpers/readme-sql.ts";
import { bearer, trackWallet } from "../helpers/seed.ts";

const ERASE = readmeSqlBlock("### Erasing a caller", "Erase a caller:");
/** What the service knows of an address, whoever tracks it: shared by every caller, naming none. */
const CHAIN_TABLES = ["address_activity", "address_state", "nfts", "risk_score_history", "token_accounts", "transactions"];

let rig: FootprintRig;
let alice: Footprint;
let bob: Footprint;

beforeAll(async () => {
  rig = await startFootprintRig("caller-erasure");
  alice = await makeFootprint(rig, "alice-desk-erase", {
    ownerEmail: "alice.owner@fund.example",
    email: "jane.analyst@fund.example",
    laterEmail: "alice.desk@fund.example",
    phone: "+14155550141",
    laterPhone: "+14155550142",
  });
  bob = await makeFootprint(rig, "bob-desk-erase", {
    ownerEmail: "bob.owner@fund.example",
    email: "joe.analyst@fund.example",
    laterEmail: "bob.desk@fund.example",
    phone: "+14155550151",
    laterPhone: "+14155550152",
  });
}, 120_000);
afterAll(async () => {
  await rig?.close();
});

/** What the rows hold that names the caller: its ids, its sub, its words and its contacts. */
const naming = (caller: Footprint) => [...caller.ids, ...caller.personal];

/** Every row but the counter that any alert's change moves (alert_rules_version, migration 0002). */
async function rowsNow(): Promise<Map<string, string[]>> {
  const rows = await everyRow(rig.t);
  rows.delete("alert_rules_version");
  return rows;
}

describe("the README's erasure of a caller", () => {
  it("leaves no row naming the caller in any table, keeps its label loads as `erased`, and leaves the other caller's rows as they were", async () => {
    const before = await rowsNow();
    // The footprint is where the test expects it: live, archived, in the history and in the label loads.
    for (const table of ["tracked_wallets", "alerts", "alert_events", "notifications", "delivery_attempts", "deleted_alerts", "deleted_alert_events", "deleted_notifications", "deleted_delivery_attempts", "alert_changes", "label_changes", "risk_labels"]) {
      expect(rowsHolding(new Map([[table, before.get(table)!]]), naming(alice)), table).not.toEqual([]);
    }
    expect(rowsHolding(before, [alice.contacts.email]).some((row) => row.startsWith("delivery_attempts:") && row.includes("Recipient address rejected"))).toBe(true);

    const run = await runPsql(rig.t.config.databaseUrl, ERASE, { sub: alice.sub });
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);

    const after = await rowsNow();
    expect(rowsHolding(after, naming(alice))).toEqual([]);
    // The addresses alice tracked stay only in the chain data, which is no one's (a score change is there or not, as the evaluation found).
    const tablesWithAddresses = [...after].filter(([table]) => rowsHolding(new Map([[table, after.get(table)!]]), alice.addresses).length > 0).map(([table]) => table);
    expect(tablesWithAddresses).toContain("transactions");
    expect(tablesWithAddresses.filter((table) => !CHAIN_TABLES.includes(table))).toEqual([]);

    // Everything else is as it was: bob's rows and the shared ones, and alice's label load under `erased`.
    const expected = new Map(
      [...before].map(([table, rows]) => [
        table,
        rows
          .map((row) => (table === "label_changes" || table === "risk_labels" ? row.replaceAll(`"${alice.sub}"`, '"erased"') : row))
          .filter((row) => rowsHolding(new Map([[table, [row]]]), naming(alice)).length === 0)
          .sort(),
      ]),
    );
    expect(after).toEqual(expected);
    const erasedLoads = after.get("label_changes")!.filter((row) => JSON.parse(row).by === "erased");
    expect(erasedLoads).toHaveLength(1);
    expect(after.get("risk_labels")!.filter((row) => JSON.parse(row).updated_by === "erased")).toHaveLength(1);
  });

  it("has Redis name the caller only in keys that expire by themselves within the hour, as the README says", async () => {
    const redis = rig.t.deps.redis;
    const keys = await redis.keys(`${rig.t.config.queuePrefix}:*${bob.sub}*`);
    // The SMS and email budgets' hourly counts, and each delivery queue's count of the owner's burst.
    expect(keys.map((key) => key.slice(rig.t.config.queuePrefix.length).replace(/:\d+:.*$/, ""))).toEqual(
      expect.arrayContaining([":sms-budget", ":email-budget", ":deliver-sms:owner-bursts", ":deliver-email:owner-bursts", ":deliver-webhook:owner-bursts"]),
    );
    for (const key of keys) {
      const ttl = await redis.pttl(key);
      expect(ttl, key).toBeGreaterThan(0);
      expect(ttl, key).toBeLessThanOrEqual(3_600_000);
    }
  });
});

describe("the archive guard during an erasure", () => {
  it("lets through only the deletes of the transaction that says it erases: another connection meanwhile, and the same session's next transaction, are refused", async () => {
    const carol = await rig.t.token("carol-desk-erase");
    const carolWallet = await trackWallet(rig.t, carol);
    const created = await rig.t.app.inject({
      method: "POST",
      url: "/v1/risk/alerts",
      headers: bearer(carol),
      payload: { walletId: carolWallet.walletId, condition: "large_transfer", threshold: 1_000, notificationMethod: "email", recipient: "carol@fund.example" },
    });
    expect(created.statusCode).toBe(201);
    const sql = rig.t.deps.sql;
    const bobAlerts = async () => (await sql<{ id: string }[]>`select id from alerts where owner = ${bob.sub} order by id`).map((row) => row.id);
    const bobsBefore = await bobAlerts();
    expect(bobsBefore).toContain(bob.emailAlertId);

    // The README's statements, one at a time on one connection (psql's session), with carol's sub for :'sub'.
    const statements = ERASE.split(/;\s*$/m)
      .map((statement) => statement.trim())
      .filter((statement) => statement.replace(/^--.*$/gm, "").trim() !== "");
    expect(statements.at(-1)).toBe("commit");
    const session = await sql.reserve();
    try {
      for (const statement of statements.slice(0, -1)) {
        await session.unsafe(statement.replaceAll(":'sub'", "$1"), statement.includes(":'sub'") ? ["carol-desk-erase"] : []);
      }
      expect((await session`select count(*)::int as n from alerts where owner = 'carol-desk-erase'`)[0]!.n).toBe(0);

      // Meanwhile, from another connection: a plain delete of an alert that is not archived.
      await expect(sql`delete from alerts where id = ${bob.emailAlertId}`).rejects.toThrow(/is not archived/);

      await session.unsafe("commit");
      // The same session, its next transaction: held to the archive again.
      expect((await session`select current_setting('wallet_alerts.erasing', true) as setting`)[0]!.setting).not.toBe("on");
      await expect(session`delete from alerts where id = ${bob.smsAlertId}`).rejects.toThrow(/is not archived/);
    } finally {
      session.release();
    }
    expect((await sql`select 1 from tracked_wallets where owner = 'carol-desk-erase'`).length).toBe(0);
    expect(await bobAlerts()).toEqual(bobsBefore);
  });
});
