// The operator surfaces of the API: Bull Board at /admin/queues and Prometheus /metrics,
// both behind ADMIN_USER/ADMIN_PASSWORD (HTTP Basic; ADMIN_PASSWORD_PREVIOUS as well during a
// rotation). Without ADMIN_USER they are not
// registered at all and answer 404 like any unknown path: an operator surface that was not
// configured stays invisible instead of open. The HTTP request histogram is recorded on
// every route either way.
//
// No Retry on the delivery queues (deliver-webhook, deliver-email, deliver-sms). A delivery's
// schedule lives in its notification row, not in BullMQ: a failed delivery job is a notification
// that ended `failed`, and a run of that job only finds the row finished. It used to return, so
// the retried job showed *completed* (and counted as such in wallet_alerts_job_duration_seconds)
// while nothing was sent and the notification stayed failed. Nothing in this service resends a
// failed notification (there is no redeliver endpoint), so the board offers no Retry there
// (allowRetries: false hides the buttons, Retry and "Retry all", of failed and completed jobs
// alike) and its API refuses one (the hook below: Bull Board's API does not check allowRetries
// itself). This includes the disabled-alert notices on deliver-email: Bull Board's setting is
// per queue. The other queues keep Retry: a failed evaluation, risk or reconcile job has not done
// its work (its batch or score changes stay unevaluated; a sweep is a sweep), so a retry
// does it, as the reconciler's own retry of a failed batch job does. A delivery job re-run some
// other way (a script's job.retry()) ends failed, saying why (queue/jobs/deliver.ts).
import { createBullBoard } from "@bull-board/api";
import { BullMQAdapter } from "@bull-board/api/bullMQAdapter";
import { FastifyAdapter } from "@bull-board/fastify";
import type { FastifyPluginAsync } from "fastify";
import fastifyPlugin from "fastify-plugin";
import type { Registry } from "prom-client";
import type { Deps } from "../deps.ts";
import { adminEnabled, BASIC_CHALLENGE, createBasicAuthCheck } from "../metrics/basic-auth.ts";
import { createCarrierMetrics } from "../metrics/carrier-metrics.ts";
import { registerHttpMetrics } from "../metrics/http-metrics.ts";
import type { CompletedRequests } from "./completed-requests.ts";
import { createMetricsRegistry } from "../metrics/registry.ts";
import { registerScrapeCollectors } from "../metrics/scrape-collectors.ts";
import { ALL_QUEUES, DELIVERY_QUEUE, type QueueName } from "../queue/names.ts";
import { sendProblem } from "./error-handler.ts";

export const ADMIN_QUEUES_PATH = "/admin/queues";
export const METRICS_PATH = "/metrics";

/** The queues whose jobs a retry cannot redo (see above). */
const NO_RETRY_QUEUES: ReadonlySet<string> = new Set<QueueName>(Object.values(DELIVERY_QUEUE));
/**
 * Bull Board's API routes refused on those queues, and why: a retry of one job or of every job
 * of a state, a job added by hand (its "Add job" and "Duplicate"), and a job's data or run time
 * edited by hand ("Update Data", "Reschedule job"). A delivery job is made from its notification
 * row, under the notification's id; one added under another id would run beside the real one and
 * could send the notification twice, and one whose data names another notification sends that
 * one (twice, beside its own job) while its own waits for the reconciler. Its schedule is the
 * row's next_attempt_at: a job woken earlier goes back to sleep until then, so a new run time
 * could only hold the notification back.
 *
 * Still allowed there (none sends anything or changes what is sent): Promote (a job not due goes
 * back to sleep), Change priority (the order of jobs waiting), Clean/Remove (the reconciler makes
 * a job again for a notification still owed), Empty, Obliterate, Pause and Resume. Job
 * schedulers: the delivery queues have none, and Bull Board only edits existing ones.
 */
const REFUSED_ROUTES: ReadonlyMap<string, (queue: string) => string> = new Map([
  [`${ADMIN_QUEUES_PATH}/api/queues/:queueName/:jobId/retry`, notRetried],
  [`${ADMIN_QUEUES_PATH}/api/queues/:queueName/retry/:queueStatus`, notRetried],
  [
    `${ADMIN_QUEUES_PATH}/api/queues/:queueName/add`,
    (queue) => `jobs are not added to ${queue} by hand: a delivery job is made from its notification, and another beside it could send it twice`,
  ],
  [
    `${ADMIN_QUEUES_PATH}/api/queues/:queueName/:jobId/update-data`,
    (queue) =>
      `the data of ${queue}'s jobs is not edited by hand: a delivery job's data is its notification's id, and a job pointed at another notification would send that one twice`,
  ],
  [
    `${ADMIN_QUEUES_PATH}/api/queues/:queueName/:jobId/delay`,
    (queue) =>
      `jobs of ${queue} are not rescheduled by hand: a delivery's schedule is its notification's next attempt; a job woken earlier goes back to sleep until then, a later one only holds the notification back`,
  ],
]);

function notRetried(queue: string): string {
  return `jobs of ${queue} are not retried: a delivery job cannot resend its notification (a failed one stays failed), so a retry would send nothing`;
}

/** Registered on the root app (not encapsulated): the Twilio status callback route uses its carrierMetrics decorator. */
export function adminPlugin(deps: Deps, completed: CompletedRequests): FastifyPluginAsync {
  return fastifyPlugin(
    async (app) => {
      const registry = createMetricsRegistry();
      registerHttpMetrics(completed, registry);
      registerScrapeCollectors(registry, deps);
      // For the Twilio status callback route, which counts the verdicts it records.
      app.decorate("carrierMetrics", createCarrierMetrics(registry));
      if (!adminEnabled(deps.config.admin)) return;
      // Said at start (never the value), so that a rotation's previous password is not left in force once it is done.
      if (deps.config.admin.previousPassword) {
        deps.logger.info("ADMIN_PASSWORD_PREVIOUS is set: /metrics and /admin/queues accept it as well as ADMIN_PASSWORD; unset it once the rotation is done");
      }
      await app.register(protectedRoutes(deps, registry));
    },
    { name: "wallet-alerts-admin" },
  );
}

function protectedRoutes(deps: Deps, registry: Registry): FastifyPluginAsync {
  return async (app) => {
    const authorized = createBasicAuthCheck(deps.config.admin);
    // Answer here rather than throw: Bull Board installs its own error handler for its
    // routes, which would turn a thrown 401 into its generic 500 body.
    app.addHook("onRequest", async (request, reply) => {
      if (authorized(request.headers.authorization)) return;
      return sendProblem(reply, "unauthorized", "the admin surfaces need ADMIN_USER and ADMIN_PASSWORD (HTTP Basic)", {
        headers: { "www-authenticate": BASIC_CHALLENGE },
      });
    });

    app.get(METRICS_PATH, { schema: { hide: true } }, async (_request, reply) =>
      reply.type(registry.contentType).send(await registry.metrics()),
    );

    // Bull Board answers any error with its own 500 and the error's message; with Redis away
    // its API says so like every other route: 503 problem+json (ioredis knows at once).
    app.addHook("preHandler", async (request, reply) => {
      if (!request.url.startsWith(`${ADMIN_QUEUES_PATH}/api/`) || deps.redis.status === "ready") return;
      return sendProblem(reply, "unavailable", "Redis cannot be reached", { headers: { "retry-after": "5" } });
    });

    // Bull Board's API retries (adds, edits) whatever it is asked to, allowRetries or not: refused here.
    app.addHook("preHandler", async (request, reply) => {
      const refusal = REFUSED_ROUTES.get(request.routeOptions.url ?? "");
      if (!refusal) return;
      const { queueName } = request.params as { queueName?: string };
      if (queueName === undefined || !NO_RETRY_QUEUES.has(queueName)) return;
      return sendProblem(reply, "forbidden", refusal(queueName));
    });

    const serverAdapter = new FastifyAdapter();
    serverAdapter.setBasePath(ADMIN_QUEUES_PATH);
    createBullBoard({
      queues: ALL_QUEUES.map((name) =>
        NO_RETRY_QUEUES.has(name)
          ? new BullMQAdapter(deps.queues[name], {
              allowRetries: false,
              description: "No Retry: a delivery job cannot resend a failed notification",
            })
          : new BullMQAdapter(deps.queues[name]),
      ),
      serverAdapter,
      options: { uiConfig: { boardTitle: "wallet-alerts" } },
    });
    await app.register(serverAdapter.registerPlugin(), { prefix: ADMIN_QUEUES_PATH });
  };
}
