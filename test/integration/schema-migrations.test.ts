// What the later migrations promise: identifiers that compare byte by byte (0003), ingest's
// per-address counters moved out of address_state with nothing lost on the way (0004), a
// replaced webhook secret still in its grace period kept signing (0005, 0006), and the stored
// transactions kept as leg 0 of their signature (0007), the owner's email added to existing
// alerts empty, outside what reloads the workers' alert rules (0010), and the same for the
// dates of a secret's rotation and of a disabling, a rotation on record dated from it (0014).
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase } from "../helpers/db.ts";
import { fromDatabaseMigratedUpTo } from "../helpers/migrated-up-to.ts";

const BYTEWISE_COLUMNS = [
  ["address_state", "address"],
  ["address_activity", "address"],
  ["ingest_batches", "id"],
  ["risk_labels", "address"],
  ["transactions", "signature"],
  ["transactions", "from_address"],
  ["transactions", "to_address"],
  ["transactions", "batch_id"],
] as const;

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let sql: postgres.Sql;

beforeAll(async () => {
  db = await createTestDatabase("schema-migrations");
  sql = postgres(db.url, { max: 1, onnotice: () => {} });
});

afterAll(async () => {
  await sql?.end();
  await db?.drop();
});

describe("identifier columns (0003)", () => {
  it.each(BYTEWISE_COLUMNS)('%s.%s is collated "C"', async (table, column) => {
    const [row] = await sql<{ collation: string | null }[]>`
      select collation_name as collation from information_schema.columns
      where table_schema = 'public' and table_name = ${table} and column_name = ${column}`;
    expect(row?.collation).toBe("C");
  });

  it("orders addresses by byte (upper case before lower case), so the indexes need no locale", async () => {
    await sql`insert into address_state (address) values ('b1'), ('B2'), ('a3'), ('A4')`;
    const rows = await sql<{ address: string }[]>`select address from address_state order by address`;
    expect(rows.map((row) => row.address)).toEqual(["A4", "B2", "a3", "b1"]);
  });
});

describe("address_activity (0004)", () => {
  it("carries each address's last activity and history total over from address_state", async () => {
    await fromDatabaseMigratedUpTo(3, async (old, upgrade) => {
      await old`
        insert into address_state (address, risk_score, last_activity, transaction_count)
        values ('busy', 40, 1700000500, 12), ('quiet', 0, null, 0), ('scored-only', 55, null, 0)`;
      await upgrade();
      const activity = await old`
        select address, last_activity::float8 as "lastActivity", transaction_count::float8 as "transactionCount"
        from address_activity order by address`;
      expect(activity).toEqual([{ address: "busy", lastActivity: 1_700_000_500, transactionCount: 12 }]);
      const states = await old`select address, risk_score as "riskScore" from address_state order by address`;
      expect(states).toEqual([
        { address: "busy", riskScore: 40 },
        { address: "quiet", riskScore: 0 },
        { address: "scored-only", riskScore: 55 },
      ]);
    });
  });
});

describe("previous webhook secrets (0005, 0006)", () => {
  it("keeps a replaced secret still in its grace period signing, and drops an expired one", async () => {
    await fromDatabaseMigratedUpTo(4, async (old, upgrade) => {
      const inGrace = new Date(Date.now() + 3_600_000);
      await old`insert into tracked_wallets (id, owner, address) values ('wal_1', 'alice', 'addr1')`;
      await old`
        insert into alerts (id, owner, wallet_id, condition, threshold, notification_method, webhook_url,
                            webhook_secret, previous_webhook_secret, previous_secret_expires_at)
        values ('alr_grace', 'alice', 'wal_1', 'large_transfer', 1, 'webhook', 'https://example.com/h', 'whsec_new', 'whsec_old', ${inGrace}),
               ('alr_expired', 'alice', 'wal_1', 'large_transfer', 1, 'webhook', 'https://example.com/h', 'whsec_new', 'whsec_gone', now() - interval '1 hour'),
               ('alr_never', 'alice', 'wal_1', 'large_transfer', 1, 'webhook', 'https://example.com/h', 'whsec_only', null, null)`;
      await upgrade();
      const rows = await old<{ id: string; previous: Array<{ secret: string; expiresAt: string }> }[]>`
        select id, previous_webhook_secrets as previous from alerts order by id`;
      expect(rows.map((row) => [row.id, row.previous.map((p) => [p.secret, Date.parse(p.expiresAt)])])).toEqual([
        ["alr_expired", []],
        ["alr_grace", [["whsec_old", inGrace.getTime()]]],
        ["alr_never", []],
      ]);
    });
  });
});

describe("transaction legs (0007)", () => {
  it("keeps every stored transaction as its leg 0, and a second leg of the same signature can then be stored", async () => {
    await fromDatabaseMigratedUpTo(6, async (old, upgrade) => {
      await old`
        insert into transactions (signature, type, amount, token, from_address, to_address, block_time, slot, fee, status, batch_id)
        values ('sig1', 'transfer', 5, 'SOL', 'payer', 'first', 1700000000, 1, 0.000005, 'success', 'bat_1')`;
      await upgrade();
      expect(await old`select signature, leg, to_address as "to" from transactions`).toEqual([{ signature: "sig1", leg: 0, to: "first" }]);
      await old`
        insert into transactions (signature, leg, type, amount, token, from_address, to_address, block_time, slot, fee, status, batch_id)
        values ('sig1', 1, 'transfer', 2, 'SOL', 'payer', 'second', 1700000000, 1, 0.000005, 'success', 'bat_2'),
               ('sig1', 0, 'transfer', 5, 'SOL', 'payer', 'first', 1700000000, 1, 0.000005, 'success', 'bat_2')
        on conflict (signature, leg) do nothing`;
      const legs = await old`select leg, to_address as "to" from transactions where signature = 'sig1' order by leg`;
      expect(legs).toEqual([
        { leg: 0, to: "first" },
        { leg: 1, to: "second" },
      ]);
    });
  });
});

describe("alert owner email (0010)", () => {
  it("leaves existing alerts without an owner email, and changing one does not reload the workers' alert rules", async () => {
    await fromDatabaseMigratedUpTo(9, async (old, upgrade) => {
      await old`insert into tracked_wallets (id, owner, address) values ('wal_1', 'alice', 'addr1')`;
      await old`
        insert into alerts (id, owner, wallet_id, condition, threshold, notification_method, recipient)
        values ('alr_before', 'alice', 'wal_1', 'large_transfer', 1, 'email', 'alice@fund.example')`;
      await upgrade();
      expect(await old`select id, owner_email as "ownerEmail" from alerts`).toEqual([{ id: "alr_before", ownerEmail: null }]);
      const version = async () => (await old<{ version: number }[]>`select version::float8 as version from alert_rules_version`)[0]!.version;
      const before = await version();
      await old`update alerts set owner_email = 'alice@fund.example' where id = 'alr_before'`;
      expect(await version()).toBe(before);
    });
  });
});

describe("secret rotation and disabling dates (0014)", () => {
  it("dates the rotations on record, leaves disablings undated, and setting either does not reload the workers' alert rules", async () => {
    await fromDatabaseMigratedUpTo(13, async (old, upgrade) => {
      const rotatedAt = new Date(Date.now() - 3_600_000);
      const previous = [{ secret: "whsec_old", expiresAt: new Date(rotatedAt.getTime() + 24 * 3_600_000).toISOString() }];
      await old`insert into tracked_wallets (id, owner, address) values ('wal_1', 'alice', 'addr1')`;
      await old`
        insert into alerts (id, owner, wallet_id, condition, threshold, notification_method, webhook_url, webhook_secret,
                            previous_webhook_secrets, status, disabled_reason)
        values ('alr_rotated', 'alice', 'wal_1', 'large_transfer', 1, 'webhook', 'https://example.com/h', 'whsec_new',
                ${old.json(previous)}, 'active', null),
               ('alr_disabled', 'alice', 'wal_1', 'large_transfer', 1, 'webhook', 'https://example.com/h', 'whsec_only',
                '[]', 'disabled', 'the webhook endpoint answered 410 Gone')`;
      await upgrade();
      const rows = await old<{ id: string; rotatedAt: number | null; disabledAt: string | null }[]>`
        select id, round(extract(epoch from secret_rotated_at) * 1000)::float8 as "rotatedAt", disabled_at as "disabledAt"
        from alerts order by id`;
      expect(rows).toEqual([
        { id: "alr_disabled", rotatedAt: null, disabledAt: null },
        { id: "alr_rotated", rotatedAt: rotatedAt.getTime(), disabledAt: null },
      ]);
      const version = async () => (await old<{ version: number }[]>`select version::float8 as version from alert_rules_version`)[0]!.version;
      const before = await version();
      await old`update alerts set secret_rotated_at = now(), disabled_at = now()`;
      expect(await version()).toBe(before);
    });
  });
});
