// What carriers made of our SMS, as Twilio's status callbacks tell the API: a rising share of
// `undelivered` (a filtered sender, unreachable handsets) shows here before a compliance desk
// notices the texts it never got. Counted as the callbacks are recorded, not from the
// notifications table, which only grows (see delivery-metrics.ts).
import { Counter, type Registry } from "prom-client";
import { CARRIER_VERDICTS } from "../db/queries/carrier-status.ts";
import { METRIC_PREFIX } from "./registry.ts";

export type CarrierMetrics = {
  /** A verdict (delivered, undelivered, failed…) recorded on a notification. */
  verdict: (status: string) => void;
};

declare module "fastify" {
  interface FastifyInstance {
    /** Set on the root app with the API's metrics registry (http/admin.ts). */
    carrierMetrics: CarrierMetrics;
  }
}

export function createCarrierMetrics(registry: Registry): CarrierMetrics {
  const verdicts = new Counter({
    name: `${METRIC_PREFIX}sms_carrier_verdicts_total`,
    help: "SMS verdicts that Twilio's status callbacks brought and this API recorded, by status (delivered, undelivered, failed, canceled…).",
    labelNames: ["status"],
    registers: [registry],
  });
  // Every status from the start (0), so rate() and alerts see a series before the first callback.
  for (const status of CARRIER_VERDICTS) verdicts.inc({ status }, 0);
  return { verdict: (status) => verdicts.inc({ status }) };
}
