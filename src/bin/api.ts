// npm run start:api — the HTTP interface. Run as many as you like behind a load balancer.
import { loadConfigOrExit } from "./config-or-exit.ts";
import { preflightOrExit } from "./preflight-or-exit.ts";
import { exitOnListenFailure } from "./exit-on-listen-failure.ts";
import { API_CLOCK_ROLE } from "../clock-watch.ts";
import { reportAutovacuumAtStart } from "../db/autovacuum.ts";
import { reportDatabaseAtStart } from "../db/schema-version.ts";
import { createDeps } from "../deps.ts";
import { buildApp, type AppInstance } from "../http/app.ts";
import { createConnectionFaultExit, exitWhenProducersUnusable } from "../queue/connection-fault.ts";
import { onStopSignal } from "../signals.ts";

const DRAIN_BOUND_MS = 20_000;
const config = loadConfigOrExit();
const deps = createDeps(config);
// Before any wait below: the start waits up to 5 s for PostgreSQL and Redis, and a SIGTERM
// meanwhile must stop the process gracefully (in a container, node is PID 1, which ignores a
// signal it has no handler for: the stop would wait for the grace period's SIGKILL).
let app: AppInstance | undefined;
let stopping = false;
let shuttingDown = false;
onStopSignal(
  async (signal) => {
    stopping = true;
    if (app) {
      await waitForLoadBalancers(signal);
      await closeApp(app);
    }
    await deps.close();
  },
  (message) => deps.logger.info(message),
);
// Settings that PostgreSQL or Redis refuse stop the process here, with one line naming them:
// serving would only answer 503 to every request until an operator fixes them anyway. A late
// Redis does not: requests answer 503 until it is back, and /readyz says why.
const reachable = await preflightOrExit(deps, "api");
if (reachable.redis === "unreachable") deps.logger.warn("Redis is not reachable yet; serving 503 until it is");
// Said at start (never the value), so that a rotation's previous secret is not left in force once it is done.
if (config.jwt.previousSecret) {
  deps.logger.info("JWT_SECRET_PREVIOUS is set: tokens signed with it are accepted as well as JWT_SECRET's; unset it once they have expired");
}
// A stop that came during the wait has closed the connections: nothing is left to start.
if (!stopping) {
  // This process's clock against PostgreSQL's, at start and every 30 s: more than 5 s off, and
  // /readyz answers 503 naming it (it still serves what is sent to it); src/clock-watch.ts.
  void deps.clockSkew.start(API_CLOCK_ROLE);
  // A producer connection BullMQ could not set up (its INFO check failed) fails every enqueue
  // until a restart, however well Redis answers later, while /readyz says ready: exit with one
  // line, as a worker does, for the supervisor to start a fresh process.
  const fault = createConnectionFaultExit({
    logger: deps.logger,
    who: "api",
    consequence: "(every request that enqueues a job would fail until it is restarted)",
    stopping: () => stopping,
  });
  exitWhenProducersUnusable(deps.queues, fault);
  app = await buildApp(deps, { shuttingDown: () => shuttingDown });
  await app.listen({ port: config.port, host: config.host }).catch((error: unknown) => {
    stopping = true;
    return exitOnListenFailure(error, {
      logger: deps.logger,
      who: "api",
      portSetting: "PORT",
      port: config.port,
      host: config.host,
      close: async () => {
        await app?.close();
        await deps.close();
      },
    });
  });
}
// Likewise for PostgreSQL, and a schema behind the code: /readyz says so, the log too.
void reportDatabaseAtStart(deps.sql, deps.logger, "api", "requests are answered 503 until it is");
// And a PostgreSQL without autovacuum, which fails nothing and fills the disk (src/db/autovacuum.ts).
void reportAutovacuumAtStart(deps.sql, deps.logger, "api");

/**
 * SHUTDOWN_DELAY: Kubernetes takes a terminating pod out of its Service's endpoints (and an
 * ingress out of its upstreams) asynchronously, seconds after SIGTERM; a process that stopped
 * accepting at once refused the connections still sent to it, and every rollout cost clients
 * 502s and resets. So it goes on serving for the delay, with /readyz answering 503 (for load
 * balancers that go by it), and only then drains. SIGINT is a person at a terminal (Ctrl-C),
 * whom no load balancer stands in front of: it does not wait.
 */
async function waitForLoadBalancers(signal: string): Promise<void> {
  if (signal !== "SIGTERM" || config.shutdownDelayMs === 0) return;
  shuttingDown = true;
  deps.logger.info(
    { shutdownDelayMs: config.shutdownDelayMs },
    `still serving for ${config.shutdownDelayMs} ms (SHUTDOWN_DELAY), /readyz answering 503, before the drain`,
  );
  await new Promise((resolve) => setTimeout(resolve, config.shutdownDelayMs));
}

async function closeApp(server: AppInstance): Promise<void> {
  // close() stops accepting and waits for in-flight requests. A keep-alive connection whose
  // request finished after that is idle but still open, and would hold the close for the
  // whole keep-alive timeout: sweep idle connections until done, and after DRAIN_BOUND_MS
  // close whatever is left.
  const sweep = setInterval(() => server.server.closeIdleConnections(), 100);
  const bound = setTimeout(() => server.server.closeAllConnections(), DRAIN_BOUND_MS);
  try {
    await server.close();
  } finally {
    clearInterval(sweep);
    clearTimeout(bound);
  }
}
