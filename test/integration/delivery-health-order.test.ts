// A permanent failure counts against its alert before the attempt is recorded. Recorded first,
// a failure of the alert's update (PostgreSQL away a moment) left the notification failed, the
// job's retry found it finished, and a receiver's 410 Gone never disabled the alert. The
// failure is injected into the real database: a trigger refuses the first update of the
// alert's failure run or status, as a dropped connection would (57P01).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { alertRow, attemptsOf, isFinished, seedAlert, seedNotification, startDeliveryWorkers, waitForNotification, type DeliveryWorkers } from "../helpers/delivery.ts";
import { waitFor } from "../helpers/wait.ts";
import { startWebhookReceiver, type WebhookReceiver } from "../helpers/webhook-receiver.ts";

let t: TestApp;
let receiver: WebhookReceiver;
let workers: DeliveryWorkers;

beforeAll(async () => {
  t = await startTestApp("delivery-health-order");
  await t.deps.sql.unsafe(`
    create sequence health_updates_seen;
    create function refuse_first_health_update() returns trigger language plpgsql as $$
    begin
      if (new.failing_since is distinct from old.failing_since or new.status is distinct from old.status)
         and nextval('health_updates_seen') = 1 then
        raise exception 'terminating connection due to administrator command' using errcode = '57P01';
      end if;
      return new;
    end $$;
    create trigger refuse_first_health_update before update on alerts
      for each row execute function refuse_first_health_update();`);
  receiver = await startWebhookReceiver();
  workers = startDeliveryWorkers(t, { webhookTimeoutMs: 5_000 });
});
afterAll(async () => {
  await workers?.close();
  await receiver?.close();
  await t?.close();
});

describe("a 410 Gone whose alert update fails once", () => {
  it("still disables the alert: the job's retry answers the receiver again and counts it then", async () => {
    const route = receiver.route("/gone");
    const alert = await seedAlert(t, { method: "webhook", webhookUrl: route.url });
    route.verifyWith(alert.secret!).respond({ status: 410 }, { status: 410 });
    const id = await seedNotification(t, alert, "webhook", route.url);

    const disabled = await waitFor("the alert to be disabled", async () => {
      const row = await alertRow(t, alert.alertId);
      return row.status === "disabled" && row;
    });
    expect(disabled.disabledReason).toBe("the webhook endpoint answered 410 Gone");
    expect((await waitForNotification(t, id, isFinished)).status).toBe("failed");
    // The first attempt's count was refused, so it was made again: two POSTs, the second recorded.
    expect(route.requests).toHaveLength(2);
    expect((await attemptsOf(t, id)).map((attempt) => attempt.statusCode)).toEqual([410]);
  });
});
