// Postgres's autovacuum, stood in for when the server runs without it (`autovacuum = off`, as
// on some test machines). The pipeline updates address_activity rows on every batch and
// address_state rows on every score change; with no vacuum they bloat, and the benchmark
// would measure a Postgres that no deployment runs (on one machine here: 119 µs of Postgres
// CPU per transaction with autovacuum off, 93 with it on). The same trigger rule as
// autovacuum, with the server's own thresholds, checked as often as autovacuum would (every
// autovacuum_naptime), one table at a time, on its own connection to the benchmark's
// database: so its CPU counts as Postgres's, as autovacuum's would.
import postgres from "postgres";

export type StandInReport = { autovacuum: "on" } | { autovacuum: "off"; standIn: { vacuums: number; analyzes: number } };

type TableStats = { table: string; vacuum: boolean; analyze: boolean };

/** Starts the stand-in when the server's autovacuum is off; stop() ends it and reports what it did. */
export async function standInForAutovacuum(databaseUrl: string): Promise<{ stop: () => Promise<StandInReport> }> {
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  const [setting] = await sql<{ on: boolean; naptimeSeconds: number }[]>`
    select current_setting('autovacuum')::boolean as on,
           extract(epoch from current_setting('autovacuum_naptime')::interval)::float8 as "naptimeSeconds"`;
  const intervalMs = (setting?.naptimeSeconds ?? 60) * 1000;
  if (setting?.on) {
    await sql.end();
    return { stop: async () => ({ autovacuum: "on" }) };
  }
  const done = { vacuums: 0, analyzes: 0 };
  let stopping = false;
  let wake: () => void = () => {};
  const loop = (async () => {
    while (!stopping) {
      for (const table of await tablesDue(sql)) {
        if (stopping) break;
        if (table.vacuum) await sql.unsafe(`vacuum ${table.table}`);
        if (table.analyze) await sql.unsafe(`analyze ${table.table}`);
        done.vacuums += table.vacuum ? 1 : 0;
        done.analyzes += table.analyze ? 1 : 0;
      }
      await new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, intervalMs);
      });
    }
  })();
  return {
    stop: async () => {
      stopping = true;
      wake();
      await loop;
      await sql.end();
      return { autovacuum: "off", standIn: done };
    },
  };
}

/** Autovacuum's rule: dead (or, since PG 13, inserted) rows past threshold + scale factor × live rows. */
async function tablesDue(sql: postgres.Sql): Promise<TableStats[]> {
  return sql<TableStats[]>`
    with setting as (
      select current_setting('autovacuum_vacuum_threshold')::float8 as vt,
             current_setting('autovacuum_vacuum_scale_factor')::float8 as vs,
             current_setting('autovacuum_vacuum_insert_threshold')::float8 as it,
             current_setting('autovacuum_vacuum_insert_scale_factor')::float8 as "is",
             current_setting('autovacuum_analyze_threshold')::float8 as at,
             current_setting('autovacuum_analyze_scale_factor')::float8 as "as"
    )
    select quote_ident(relname) as table,
           n_dead_tup > vt + vs * n_live_tup or n_ins_since_vacuum > it + "is" * n_live_tup as vacuum,
           n_mod_since_analyze > at + "as" * n_live_tup as analyze
    from pg_stat_user_tables, setting
    where schemaname = 'public'
      and (n_dead_tup > vt + vs * n_live_tup or n_ins_since_vacuum > it + "is" * n_live_tup
           or n_mod_since_analyze > at + "as" * n_live_tup)
    order by n_dead_tup desc`;
}
