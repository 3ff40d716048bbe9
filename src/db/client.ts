import postgres from "postgres";
import { drizzle, type PostgresJsDatabase } from "drizzle-orm/postgres-js";
import * as schema from "./schema.ts";

export type Database = PostgresJsDatabase<typeof schema>;
export type Sql = postgres.Sql;

/**
 * max: the most connections the pool opens, always the caller's choice (DATABASE_POOL_SIZE for
 * the API and the workers): it wins over a ?max= in the URL, which loadConfig refuses for that.
 */
export type DbOptions = {
  max: number;
  onnotice?: (notice: unknown) => void;
  /**
   * Appended to the sessions' application_name ("wallet-alerts-monitor"): a pool kept apart
   * for one purpose is told apart in pg_stat_activity, and not counted with the request pool.
   */
  applicationNameSuffix?: string;
};

/**
 * A query waits out the pool's pause before it tries to connect again. postgres.js grows
 * that pause with every failed attempt, up to 20 s, so while PostgreSQL was down every
 * request hung 10–20 s before its 503, and the first ones after it came back waited too.
 * Short and capped, with jitter so that the processes do not knock in step.
 */
export const reconnectPauseSeconds = (failures: number): number =>
  (0.5 + Math.random() / 2) * Math.min(0.05 * 2 ** failures, 0.5);

/** A PostgreSQL that drops packets instead of refusing would otherwise hold a request 30 s. */
const CONNECT_TIMEOUT_SECONDS = 5;

/**
 * A connection whose server has vanished (its host gone, the network cut after the query got
 * there) gets no answer and no error: its query, and the pool slot, waited until TCP gave up.
 * Keepalive probes find such a peer: after this many idle seconds, then every second, ten
 * times (libuv's fixed interval and count), so in about 20 s instead of postgres.js's 70.
 * A live server's kernel answers the probes however long a statement runs, so nothing
 * legitimate is cut; an idle connection costs one small packet every 10 s.
 */
const KEEPALIVE_IDLE_SECONDS = 10;

/**
 * The other side: a session whose client vanished (an API or worker host gone, partitioned)
 * while PostgreSQL waited for its next command — mid-transaction, say, holding ingest's lock
 * or an evaluation's batch claims — kept its locks until the server's keepalive found it,
 * which by default starts after two hours. Probed after 10 idle seconds, every 5, three
 * times, such a session ends in about 25 s. Only a client host that answers no probe is cut:
 * a worker waiting on Redis inside a transaction, or a long migration, is not (unlike
 * idle_in_transaction_session_timeout or statement_timeout, which this service does not set:
 * the workers and migrations share these settings, and their long waits are legitimate).
 * Ignored on a Unix-socket connection.
 */
const SERVER_KEEPALIVE = { tcp_keepalives_idle: "10", tcp_keepalives_interval: "5", tcp_keepalives_count: "3" };

/**
 * Every statement of this service is a small OLTP one. JIT compilation is for long analytic
 * queries, and Postgres chooses it by estimated cost: on statistics that trail a table's
 * growth (a table filled since its last analyze) a lookup of a few rows was estimated
 * expensive, compiled for 12 ms and ran in 38 ms, against 0.5 ms without (the evaluation's
 * read of its score alerts, inside the transaction that holds the group's locks).
 */
const APPLICATION_NAME = "wallet-alerts";
const SESSION_SETTINGS = { application_name: APPLICATION_NAME, jit: "off", ...SERVER_KEEPALIVE };

/** One postgres.js pool and the drizzle view of it; `sql` is there for the hot paths. */
export function createDb(url: string, options: DbOptions): { db: Database; sql: Sql } {
  const sql = postgres(url, {
    max: options.max,
    onnotice: options.onnotice ?? (() => {}),
    connection: options.applicationNameSuffix
      ? { ...SESSION_SETTINGS, application_name: `${APPLICATION_NAME}-${options.applicationNameSuffix}` }
      : SESSION_SETTINGS,
    backoff: reconnectPauseSeconds,
    connect_timeout: CONNECT_TIMEOUT_SECONDS,
    keep_alive: KEEPALIVE_IDLE_SECONDS,
  });
  return { db: drizzle(sql, { schema }), sql };
}
