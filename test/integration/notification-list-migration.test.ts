// Migration 0027 on a large notifications table: the README's recipe adds the column and builds
// the index beforehand (CONCURRENTLY, without blocking writes), and the migration finds them
// there. Its statements had no IF NOT EXISTS: a column added by hand made it fail.
import postgres from "postgres";
import { describe, expect, it } from "vitest";
import { createTestDatabase } from "../helpers/db.ts";
import { fromDatabaseMigratedUpTo } from "../helpers/migrated-up-to.ts";

/** What 0027 leaves: the columns, the index (valid), the trigger, the sequence. */
async function listSchema(sql: postgres.Sql) {
  const columns = await sql`
    select table_name as "table", data_type as type, column_default as "default", is_nullable as nullable
    from information_schema.columns where column_name = 'list_seq' order by table_name`;
  const indexes = await sql`
    select c.relname as name, pg_get_indexdef(i.indexrelid) as definition, i.indisvalid as valid
    from pg_index i join pg_class c on c.oid = i.indexrelid
    where i.indrelid = 'notifications'::regclass and c.relname = 'notifications_alert_list_idx'`;
  const triggers = await sql`
    select tgname as name, pg_get_triggerdef(oid) as definition
    from pg_trigger where tgrelid = 'notifications'::regclass and not tgisinternal order by tgname`;
  const sequences = await sql`select sequencename as name, cache_size::int as cache from pg_sequences where sequencename = 'notifications_list_seq'`;
  return { columns, indexes, triggers, sequences };
}

describe("migration 0027", () => {
  it("finds the column and the index an operator made beforehand, and leaves the schema a fresh database has", async () => {
    const fresh = await createTestDatabase("notification-list-migration");
    const freshSql = postgres(fresh.url, { max: 1, onnotice: () => {} });
    try {
      const expected = await listSchema(freshSql);
      expect(expected.indexes).toHaveLength(1);
      expect(expected.triggers.map((trigger) => trigger.name)).toContain("notifications_list_seq");
      await fromDatabaseMigratedUpTo(
        26,
        async (old, upgrade) => {
          // The README's recipe, as an operator runs it before the upgrade.
          await old.unsafe(`ALTER TABLE "notifications" ADD COLUMN IF NOT EXISTS "list_seq" bigint DEFAULT 0 NOT NULL`);
          await old.unsafe(`ALTER TABLE "deleted_notifications" ADD COLUMN IF NOT EXISTS "list_seq" bigint DEFAULT 0 NOT NULL`);
          await old.unsafe(
            `CREATE INDEX CONCURRENTLY IF NOT EXISTS "notifications_alert_list_idx" ON "notifications" USING btree ("alert_id","list_seq","id")`,
          );
          await upgrade();
          expect(await listSchema(old)).toEqual(expected);
        },
        { nextTag: "0027_alert-notification-list" },
      );
    } finally {
      await freshSql.end();
      await fresh.drop();
    }
  });
});
