// Stopping a statement inside its update of a notification, for the tests of what two writers
// do when each holds what the other waits for (lock order). Real Postgres: a trigger waits.
import type { Sql } from "../../src/db/client.ts";
import { waitFor } from "./wait.ts";

/**
 * Makes an update of a notification listed in `paused_notification_updates` wait, inside its
 * statement, for the advisory lock `pause` (held by the test on another connection): the
 * statement has taken every lock it takes before it writes that notification, and holds them.
 */
export async function installNotificationUpdatePause(sql: Sql, pause: number): Promise<void> {
  await sql.unsafe(`
    create table paused_notification_updates (notification_id text primary key);
    create function pause_notification_update() returns trigger language plpgsql as $$
    begin
      if exists (select 1 from paused_notification_updates where notification_id = new.id) then
        perform pg_advisory_xact_lock_shared(${pause});
      end if;
      return new;
    end $$;
    create trigger pause_notification_update before update on notifications
      for each row execute function pause_notification_update();`);
}

/** Until `count` statements of this test's database wait on a lock. */
export async function waitForLockWaits(sql: Sql, count: number, what: string): Promise<void> {
  await waitFor(what, async () => {
    const [row] = await sql<{ waiting: number }[]>`
      select count(*)::int as waiting from pg_stat_activity
      where datname = current_database() and wait_event_type = 'Lock'`;
    return row!.waiting >= count;
  });
}
