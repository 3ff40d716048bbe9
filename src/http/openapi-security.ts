// The security schemes of the OpenAPI document beyond app.ts's bearer: the Helius webhook's
// shared secret. POST /v1/ingest/helius answers 401 without `Authorization` equal to
// HELIUS_AUTH_HEADER, and its `security: []` told generated clients, gateways and contract
// tools that it needed nothing.
//
// Set by the transform of the whole document (openapi-headers.ts), by operationId: @fastify/swagger
// resolves a route's own `security` against the schemes app.ts registers before any transform
// runs, and fails on a scheme it does not know there (the route keeps `security: []`, which it
// reads as "not the bearer").

/** The scheme's name in components.securitySchemes. */
export const HELIUS_AUTH_SCHEME = "heliusAuthHeader";

const SCHEMES = {
  [HELIUS_AUTH_SCHEME]: {
    type: "apiKey",
    in: "header",
    name: "Authorization",
    description: "the webhook's auth header: Authorization equal to HELIUS_AUTH_HEADER, as set on the Helius webhook (not a JWT)",
  },
};

/** The security of the operations that take a credential other than the bearer, by operationId. */
const OPERATION_SECURITY: Record<string, Record<string, string[]>[]> = {
  ingestHelius: [{ [HELIUS_AUTH_SCHEME]: [] }],
};

type Operation = { operationId?: string; security?: unknown[] };
type Document = { paths?: Record<string, Record<string, Operation>>; components?: { securitySchemes?: Record<string, unknown> } };

/** Adds the schemes to components.securitySchemes and names them in their operations' security. */
export function declareSecuritySchemes<T>(document: T): T {
  const doc = document as Document;
  doc.components = { ...doc.components, securitySchemes: { ...doc.components?.securitySchemes, ...SCHEMES } };
  for (const operations of Object.values(doc.paths ?? {})) {
    for (const operation of Object.values(operations)) {
      const security = operation.operationId === undefined ? undefined : OPERATION_SECURITY[operation.operationId];
      if (security) operation.security = security;
    }
  }
  return document;
}

/**
 * Whether an operation takes a bearer token: those the admission hook rate-limits. An
 * operation without security of its own has the document's, which is the bearer.
 */
export const takesBearer = (security: unknown[] | undefined): boolean =>
  security === undefined || security.some((requirement) => typeof requirement === "object" && requirement !== null && "bearer" in requirement);
