// The response headers that the admission hook in app.ts puts on answers, declared on every
// operation of the OpenAPI document by one transform of the whole document, so that no route
// can forget them: X-Request-Id on every answer, and RateLimit-* on the answers of the
// operations that take a bearer token, once the limiter has counted the request. Headers
// that depend on the route and the status (Location, Retry-After, WWW-Authenticate) are
// declared by the routes' response schemas (schemas.ts).
import { QUOTA_HOUR_SECONDS } from "./routes/test-quota.ts";

type HeaderObject = { description: string; required?: boolean; schema: Record<string, unknown> };
type Reference = { $ref: string };
type Operation = { security?: unknown[]; responses?: Record<string, { headers?: Record<string, unknown> }> };
type Document = { paths?: Record<string, Record<string, Operation>>; components?: { headers?: Record<string, unknown> } };

const RATE_LIMIT_HEADERS = ["ratelimit-limit", "ratelimit-remaining", "ratelimit-reset"] as const;

/** components.headers: each as sent on the answers that reference it, every one of them. */
const RESPONSE_HEADERS: Record<"x-request-id" | (typeof RATE_LIMIT_HEADERS)[number], HeaderObject> = {
  "x-request-id": {
    description:
      "the request's id: the X-Request-Id the request came with when it is 1–128 of A–Z a–z 0–9 _ . : -, " +
      "else a UUID made for it; also a problem's requestId, and in the service's logs",
    required: true,
    // As app.ts's REQUEST_ID; a UUID matches it too.
    schema: { type: "string", pattern: "^[\\w.:-]{1,128}$" },
  },
  "ratelimit-limit": {
    description:
      "requests a caller may make in a minute (RATE_LIMIT_PER_MINUTE); on a 429 of an hourly quota (TEST_NOTIFICATIONS_PER_HOUR " +
      "tests, REDELIVERIES_PER_HOUR notifications redelivered), that quota",
    required: true,
    schema: { type: "integer", minimum: 1 },
  },
  "ratelimit-remaining": {
    description: "requests the caller has left in the current minute; 0 on a 429 of an hourly quota",
    required: true,
    schema: { type: "integer", minimum: 0 },
  },
  "ratelimit-reset": {
    description:
      "seconds until the current minute ends and the count starts again; on a 429, over this limit or over an hourly quota " +
      "(until the hour ends), the same as Retry-After",
    required: true,
    // An hourly quota's hour, the longest (the limiter's own is a minute).
    schema: { type: "integer", minimum: 1, maximum: QUOTA_HOUR_SECONDS },
  },
};

/**
 * Whether an answer with this status has been through the limiter, which runs after the token
 * and the scope are checked (app.ts): never a 401. Sometimes a 403 (a missing scope is refused
 * before it, the handler's own 403 after), a 400 (the router refuses a malformed URL before any
 * route runs), a 503 (Redis, the limiter's own store, or the identity provider's keys missing:
 * before; PostgreSQL: after) and a 500 (whatever failed may have come before). Everything else
 * comes from the body parser or the handler, after it.
 */
function countedBy(status: string): "always" | "sometimes" | "never" {
  if (status === "401") return "never";
  return ["400", "403", "500", "503"].includes(status) ? "sometimes" : "always";
}

/**
 * Whether an operation takes a bearer token: those the admission hook rate-limits (it checks
 * no token and counts nothing on a public route, the Helius webhook, whose security names its
 * own scheme). An operation without security of its own has the document's, the bearer.
 */
const takesBearer = (security: unknown[] | undefined): boolean =>
  security === undefined || security.some((requirement) => typeof requirement === "object" && requirement !== null && "bearer" in requirement);

const reference = (name: keyof typeof RESPONSE_HEADERS): Reference => ({ $ref: `#/components/headers/${name}` });

/** Not required (a reference cannot drop `required`), and saying when it is there. */
function sometimes(name: keyof typeof RESPONSE_HEADERS): HeaderObject {
  const { description, schema } = RESPONSE_HEADERS[name];
  return { description: `${description}; with this status, only when the request got as far as the rate limit`, schema };
}

/**
 * @fastify/swagger's transformObject: adds the headers to every response of every operation.
 * An operation without a bearer token (the Helius webhook, with its own scheme) is not
 * rate-limited, as app.ts skips the limiter for its public routes.
 */
export function declareResponseHeaders<T extends { paths?: unknown }>(document: T): T {
  const doc = document as Document;
  doc.components = { ...doc.components, headers: { ...doc.components?.headers, ...RESPONSE_HEADERS } };
  for (const operations of Object.values(doc.paths ?? {})) {
    for (const operation of Object.values(operations)) {
      const limited = takesBearer(operation.security);
      for (const [status, response] of Object.entries(operation.responses ?? {})) {
        const headers: Record<string, unknown> = { ...response.headers, "x-request-id": reference("x-request-id") };
        const counted = limited ? countedBy(status) : "never";
        if (counted !== "never") {
          for (const name of RATE_LIMIT_HEADERS) headers[name] = counted === "always" ? reference(name) : sometimes(name);
        }
        response.headers = headers;
      }
    }
  }
  return document;
}
