// The one line each API request writes (app.ts, through completed-requests.ts): what was asked,
// how it was answered, by whom, and from where. The client's address and user agent are there
// for whoever investigates a token's misuse: the caller says whose token it was, these where it
// was used. Only values the request already holds are read: this runs on every request.
import type { FastifyReply, FastifyRequest } from "fastify";

/** A user agent is the client's to choose: long ones are cut here, not carried whole into every line. */
export const USER_AGENT_LOG_LIMIT = 200;
/**
 * Orchestrators' and load balancers' probes: several a few seconds per pod, each the same. Their
 * successful answers are logged at debug; a failing one stays at info, where it is seen.
 */
const PROBE_ROUTES: ReadonlySet<string> = new Set(["/healthz", "/readyz"]);

/** The level of a request's line: debug for a probe answered below 400, info for everything else. */
export function requestLogLevel(route: string | undefined, status: number): "info" | "debug" {
  return route !== undefined && status < 400 && PROBE_ROUTES.has(route) ? "debug" : "info";
}

/** The fields of a request's line. */
export function requestLogFields(request: FastifyRequest, reply: FastifyReply, ms: number) {
  const userAgent = request.headers["user-agent"];
  return {
    // The id a request's own logger would bind: this line does not make one (lazy-request-logger.ts).
    reqId: request.id,
    method: request.method,
    url: request.url.split("?")[0],
    route: request.routeOptions.url,
    status: reply.statusCode,
    ms: Math.round(ms * 10) / 10,
    caller: request.caller?.sub,
    // The connection's peer: the app sets no trustProxy, so behind a proxy or load balancer this
    // is the proxy's address, and X-Forwarded-For is not read (a client could write anything there).
    ip: request.ip,
    userAgent: userAgent !== undefined && userAgent.length > USER_AGENT_LOG_LIMIT ? userAgent.slice(0, USER_AGENT_LOG_LIMIT) : userAgent,
  };
}
