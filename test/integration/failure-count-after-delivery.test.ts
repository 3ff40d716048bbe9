// A permanent failure counts against its alert only while its notification is open. A stalled
// BullMQ job runs twice at once: when one run delivered the notification (clearing the alert's
// failing_since) and the other's attempt failed after it, the failure, counted before its
// attempt is recorded, started a run of failures or disabled the alert, although the
// notification got through. Real PostgreSQL; the race with the real delivery processor and a
// real receiver on loopback.
import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recordAttempts } from "../../src/db/queries/deliveries.ts";
import { notifications } from "../../src/db/schema.ts";
import type { NotificationStatus } from "../../src/domain/types.ts";
import { recordPermanentFailure, type AlertHealthDeps, type DisabledNotice, type FailureFacts } from "../../src/notify/alert-health.ts";
import { createChannels } from "../../src/notify/channels/index.ts";
import { makeDeliverProcessor } from "../../src/queue/jobs/deliver.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { failingFor } from "../helpers/failure-run.ts";
import { alertRow, attemptsOf, seedAlert, seedNotification, waitForNotification, type SeededAlert } from "../helpers/delivery.ts";
import { waitFor } from "../helpers/wait.ts";

let t: TestApp;
const notices: DisabledNotice[] = [];
let health: AlertHealthDeps;

/** The owner of the alerts whose record of a delivery the trigger below holds. */
const HELD_OWNER = "held-record";
const GATE = 4242;

beforeAll(async () => {
  t = await startTestApp("failure-count-after-delivery");
  health = { sql: t.deps.sql, logger: t.deps.logger, enqueueNotice: async (notice) => void notices.push(notice) };
  // Holds a record of a delivery that clears an alert's failure run, with the notification and
  // the alert updated (and locked) but not committed, while the test holds the advisory lock.
  await t.deps.sql.unsafe(`
    create function hold_health_clearing() returns trigger language plpgsql as $$
    begin
      if old.failing_since is not null and new.failing_since is null and new.owner = '${HELD_OWNER}' then
        perform pg_advisory_xact_lock_shared(${GATE});
      end if;
      return new;
    end $$;
    create trigger hold_health_clearing after update on alerts
      for each row execute function hold_health_clearing();`);
});
afterAll(async () => {
  await t?.close();
});

const HOUR = 3_600_000;
const DESTINATION = "http://127.0.0.1:9/hook";

/** A webhook alert (failing since `failingFor` ms, its latest failure an hour ago, when given) and a notification of it in `status`. */
async function alertWithNotification(
  status: NotificationStatus,
  options: { failingFor?: number; owner?: string; webhookUrl?: string } = {},
): Promise<{ alert: SeededAlert; notificationId: string }> {
  const webhookUrl = options.webhookUrl ?? DESTINATION;
  const alert = await seedAlert(t, { method: "webhook", webhookUrl, owner: options.owner });
  const notificationId = await seedNotification(t, alert, "webhook", webhookUrl, { enqueue: false });
  if (status === "delivered" || status === "failed") {
    // As the run that finished it records it (a delivery also ends the alert's failure run).
    const moved = await recordAttempts(t.deps.sql, [attempt(notificationId, alert.alertId, status)]);
    expect(moved.has(notificationId)).toBe(true);
  } else if (status === "retrying") {
    await t.deps.db
      .update(notifications)
      .set({ status, attemptCount: 1, nextAttemptAt: new Date(Date.now() + 60_000) })
      .where(eq(notifications.id, notificationId));
  }
  if (options.failingFor !== undefined) await failingFor(t, alert.alertId, options.failingFor);
  return { alert, notificationId };
}

function attempt(notificationId: string, alertId: string, status: "delivered" | "failed") {
  return {
    notificationId,
    alertId,
    destination: DESTINATION,
    at: new Date(),
    durationMs: 5,
    statusCode: status === "delivered" ? 200 : 400,
    error: status === "delivered" ? null : "HTTP 400",
    responseBody: null,
    status,
    nextAttemptAt: null,
  };
}

/** A permanent failure of the notification's attempt, as the delivery job counts it. */
const countFailure = (alert: SeededAlert, notificationId: string | undefined, facts: Partial<FailureFacts> = {}) =>
  recordPermanentFailure(health, { alertId: alert.alertId, notificationId, gone: false, error: "HTTP 400", now: new Date(), ...facts });

const noticesOf = (alert: SeededAlert) => notices.filter((notice) => notice.alertId === alert.alertId);

describe("a permanent failure of a notification that another run has delivered", () => {
  it("does not start a run of failures: failing_since stays null", async () => {
    const { alert, notificationId } = await alertWithNotification("delivered");

    expect(await countFailure(alert, notificationId)).toBe(false);

    const row = await alertRow(t, alert.alertId);
    expect(row.status).toBe("active");
    expect(row.failingSince).toBeNull();
  });

  it("does not disable an alert whose failures began 25 h ago", async () => {
    const { alert, notificationId } = await alertWithNotification("delivered", { failingFor: 25 * HOUR });
    const before = await alertRow(t, alert.alertId);

    expect(await countFailure(alert, notificationId)).toBe(false);

    const row = await alertRow(t, alert.alertId);
    expect(row).toMatchObject({ status: "active", disabledReason: null, disabledAt: null, disabledNoticeOwed: false });
    expect(row.failingSince).toEqual(before.failingSince);
    expect(noticesOf(alert)).toHaveLength(0);
  });

  it("does not disable the alert for a 410 Gone either: the same endpoint has just accepted it", async () => {
    const { alert, notificationId } = await alertWithNotification("delivered");

    expect(await countFailure(alert, notificationId, { gone: true, error: "HTTP 410" })).toBe(false);

    const row = await alertRow(t, alert.alertId);
    expect(row).toMatchObject({ status: "active", failingSince: null, disabledReason: null });
    expect(noticesOf(alert)).toHaveLength(0);
  });

  it("does not count again for a notification that another run failed (that run counted it)", async () => {
    const { alert, notificationId } = await alertWithNotification("failed", { failingFor: 25 * HOUR });

    expect(await countFailure(alert, notificationId)).toBe(false);

    expect((await alertRow(t, alert.alertId)).status).toBe("active");
  });
});

describe("a permanent failure of a notification still open", () => {
  it.each(["pending", "retrying"] as const)("starts the alert's run of failures (%s)", async (status) => {
    const { alert, notificationId } = await alertWithNotification(status);
    const now = new Date();

    expect(await countFailure(alert, notificationId, { now })).toBe(false);

    const row = await alertRow(t, alert.alertId);
    expect(row.status).toBe("active");
    expect(row.failingSince).toEqual(now);
  });

  it("disables an alert whose failures began 25 h ago, and queues the notice", async () => {
    const { alert, notificationId } = await alertWithNotification("retrying", { failingFor: 25 * HOUR });
    const now = new Date();

    expect(await countFailure(alert, notificationId, { now })).toBe(true);

    const row = await alertRow(t, alert.alertId);
    expect(row).toMatchObject({ status: "disabled", disabledAt: now, disabledNoticeOwed: true });
    expect(row.disabledReason).toMatch(/^its notifications failed from \S+ to \S+, none delivered, with no more than 24 hours between one failure and the next$/);
    expect(noticesOf(alert)).toEqual([{ alertId: alert.alertId, disabledAt: now }]);
  });

  it("disables the alert at once for a 410 Gone", async () => {
    const { alert, notificationId } = await alertWithNotification("pending");

    expect(await countFailure(alert, notificationId, { gone: true, error: "HTTP 410" })).toBe(true);

    const row = await alertRow(t, alert.alertId);
    expect(row).toMatchObject({ status: "disabled", disabledReason: "the webhook endpoint answered 410 Gone" });
    expect(noticesOf(alert)).toHaveLength(1);
  });

  it("counts a failure given without a notification, as before", async () => {
    const { alert } = await alertWithNotification("delivered");

    expect(await countFailure(alert, undefined, { gone: true, error: "HTTP 410" })).toBe(true);

    expect((await alertRow(t, alert.alertId)).status).toBe("disabled");
  });
});

/** Lock waits in this test's database (its own connections only). */
async function lockWaits(kind: "advisory" | "row"): Promise<number> {
  const [row] = await t.deps.sql<{ waits: number }[]>`
    select count(*)::int as waits
    from pg_locks l join pg_stat_activity a on a.pid = l.pid
    where not l.granted and a.datname = current_database()
      and (l.locktype = 'advisory') = ${kind === "advisory"}`;
  return row!.waits;
}

describe("a failure counted while another run's record of the delivery is in flight", () => {
  it("waits for the record and then counts nothing, even with the alert's failures 25 h old", async () => {
    const { alert, notificationId } = await alertWithNotification("retrying", { owner: HELD_OWNER, failingFor: 25 * HOUR });
    const gate = await t.deps.sql.reserve();
    try {
      await gate`select pg_advisory_lock(${GATE})`;
      // Run A's record: the notification delivered and the failure run cleared, not committed yet.
      const recorded = recordAttempts(t.deps.sql, [attempt(notificationId, alert.alertId, "delivered")]);
      await waitFor("the record to be held", async () => (await lockWaits("advisory")) === 1);
      // Run B's failure, counted meanwhile: its statement's snapshot still shows the notification open.
      const counted = countFailure(alert, notificationId);
      await waitFor("the count to wait for the record", async () => (await lockWaits("row")) >= 1);
      await gate`select pg_advisory_unlock(${GATE})`;

      expect((await recorded).has(notificationId)).toBe(true);
      expect(await counted).toBe(false);
    } finally {
      await gate`select pg_advisory_unlock_all()`;
      gate.release();
    }
    const row = await alertRow(t, alert.alertId);
    expect(row).toMatchObject({ status: "active", failingSince: null });
    expect(noticesOf(alert)).toHaveLength(0);
  });
});

/**
 * A webhook receiver that holds every request until the test answers it, so that two runs of
 * one notification's job both send before either answer comes back.
 */
async function startHeldReceiver(): Promise<{ url: string; held: Array<(status: number) => void>; close: () => Promise<void> }> {
  const held: Array<(status: number) => void> = [];
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on("end", () =>
      held.push((status) => {
        res.writeHead(status, { "content-type": "text/plain" });
        res.end(status === 200 ? "ok" : "no");
      }),
    );
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    held,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe("a stalled delivery job run twice at once", () => {
  it.each([400, 410])(
    "leaves the alert healthy when one run delivers and the other's attempt is then refused with %i",
    async (refusal) => {
      const receiver = await startHeldReceiver();
      const channels = createChannels(t.config, t.deps.logger, { webhookTimeoutMs: 10_000 });
      try {
        const { alert, notificationId } = await alertWithNotification("pending", { webhookUrl: receiver.url });
        const processor = makeDeliverProcessor({ ...t.deps, channels }, "webhook");
        const job = { data: { notificationId } } as never;
        // Both runs load the open notification and send it.
        const runs = [processor(job), processor(job)].map((run) => run.then(() => "returned", (error: unknown) => error));
        await waitFor("both runs' requests", async () => receiver.held.length === 2);

        receiver.held[0]!(200);
        await waitForNotification(t, notificationId, (row) => row.status === "delivered");
        receiver.held[1]!(refusal);

        // The refused run finds the notification finished when it records, and ends quietly.
        expect(await Promise.all(runs)).toEqual(["returned", "returned"]);
        const row = await alertRow(t, alert.alertId);
        expect(row).toMatchObject({ status: "active", failingSince: null, disabledReason: null });
        // Both attempts are on record; the notification stays delivered.
        expect((await attemptsOf(t, notificationId)).map((a) => a.statusCode)).toEqual([200, refusal]);
        expect((await waitForNotification(t, notificationId, () => true)).status).toBe("delivered");
        expect(noticesOf(alert)).toHaveLength(0);
      } finally {
        await channels.close();
        await receiver.close();
      }
    },
  );
});
