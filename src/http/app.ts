// Builds the HTTP app and never listens (src/bin/api.ts does), so tests use app.inject().
import { randomUUID } from "node:crypto";
import Fastify, { LogController, type FastifyBaseLogger, type FastifyError, type FastifyReply, type FastifyRequest } from "fastify";
import swagger from "@fastify/swagger";
import swaggerUi from "@fastify/swagger-ui";
import { Type, type TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import addFormats from "ajv-formats";
import type { Deps } from "../deps.ts";
import { isApiPath, isApiRoute } from "./api-paths.ts";
import { authenticate, createTokenVerifier, insufficientScope, type Caller, type Scope } from "./auth.ts";
import { answerClientError, registerErrorHandling, sendError, sendProblem } from "./error-handler.ts";
import { trackCompletedRequests } from "./completed-requests.ts";
import { closeAfterEarlyAnswers, connectionOptions } from "./connection-bounds.ts";
import { registerJsonBodyParser } from "./json-body.ts";
import { registerRequestDeadline } from "./request-deadline.ts";
import { typeStringEnums } from "./openapi-enums.ts";
import { declareResponseHeaders } from "./openapi-headers.ts";
import { webhooksDocument } from "./openapi-webhooks.ts";
import { NAMED_SCHEMAS } from "./schema-components.ts";
import { documentQueryIntegers, liftRequiredHeaders } from "./schemas.ts";
import { createRateLimiter } from "./rate-limit/index.ts";
import { lazyRequestLogger } from "./lazy-request-logger.ts";
import { requestLogFields, requestLogLevel } from "./request-log-line.ts";
import { createReadCache } from "./read-cache.ts";
import { createOperationDocumenter } from "./openapi-operations.ts";
import { createServerRefusals } from "./server-refusals.ts";
import { adminPlugin } from "./admin.ts";
import { healthRoutes } from "./routes/health.ts";
import { v1Routes } from "./routes/index.ts";

declare module "fastify" {
  interface FastifyContextConfig {
    /** The scope a /v1 route needs (DESIGN.md section 3). */
    scope?: Scope;
    /** A /v1 route that authenticates by other means (openapi.json, the Helius webhook). */
    public?: boolean;
    /**
     * false: no REQUEST_TIMEOUT 503 for this route. For a write that a retry would repeat rather
     * than find done (a test notification: a second one sent, a second unit of quota spent).
     */
    deadline?: false;
    /**
     * Body fields the route refuses because they cannot change, each with what to do instead:
     * said in place of "is not a known field" (a PATCH of an alert's condition).
     */
    fixedFields?: Readonly<Record<string, string>>;
  }
  interface FastifyRequest {
    caller: Caller;
  }
}

export const BODY_LIMIT = 1024 * 1024;
export const INGEST_BODY_LIMIT = 10 * 1024 * 1024;
/**
 * The Helius webhook's scheme in components.securitySchemes, which its route names in its
 * security (routes/helius.ts). Registered here: @fastify/swagger fails on a route whose
 * security names a scheme it was not given.
 */
export const HELIUS_AUTH_SCHEME = "heliusAuthHeader";
const REQUEST_ID = /^[\w.:-]{1,128}$/;
const MAX_PARAM_LENGTH = 200;
/** What the router's own refusals say. */
const ROUTER_ERRORS: Record<string, string> = {
  FST_ERR_BAD_URL: "the URL is malformed (bad percent-encoding)",
  FST_ERR_MAX_PARAM_LENGTH: `a path parameter is longer than ${MAX_PARAM_LENGTH} characters`,
};
/** The query of a route that takes no parameters: any one given is refused, not ignored. */
const NO_QUERY = Type.Object({}, { additionalProperties: false });
// ajv-formats is CommonJS; its typing does not match Fastify's plugin slot.
const formatsPlugin = addFormats as never;

export type AppOptions = {
  /**
   * True once the process was told to stop and waits SHUTDOWN_DELAY before it drains
   * (src/bin/api.ts): /readyz answers 503, and every answer closes its connection, so that a
   * client or proxy on a kept-alive connection opens its next one to a process that stays.
   */
  shuttingDown?: () => boolean;
};

export async function buildApp(deps: Deps, options: AppOptions = {}) {
  const shuttingDown = options.shuttingDown ?? (() => false);
  const verify = createTokenVerifier(deps.config.jwt);
  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    // One line per request comes from the onResponse hook below, not Fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: BODY_LIMIT,
    // How long a client may take to send a request, sit idle, keep a connection (connection-bounds.ts).
    ...connectionOptions(deps.config),
    // A request's own logger is made only if something logs through it (lazy-request-logger.ts).
    childLoggerFactory: lazyRequestLogger,
    requestIdHeader: false,
    genReqId: (req) => {
      const given = req.headers["x-request-id"];
      return typeof given === "string" && REQUEST_ID.test(given) ? given : randomUUID();
    },
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH, ignoreTrailingSlash: true },
    ajv: {
      // Strict typing: "1000" is not a number and unknown fields are errors, not dropped.
      customOptions: { coerceTypes: false, removeAdditional: false, allErrors: true, verbose: true },
      plugins: [formatsPlugin],
    },
    clientErrorHandler: answerClientError,
    // A request that arrives while the app drains is answered by the admission hook below, as
    // problem+json (server-refusals.ts), not by Fastify before any hook runs.
    return503OnClosing: false,
    // The router refused the URL before any hook ran: for the API, the token is still checked
    // first, so a request without a valid one is a 401 whatever else is wrong with it.
    frameworkErrors: (error, request, reply) => {
      // The onRequest hook that sets it never runs on this path.
      reply.header("x-request-id", request.id);
      completed.observeUnrouted(request, reply);
      const refuse = () => sendProblem(reply, "validation_failed", ROUTER_ERRORS[error.code] ?? error.message);
      if (!isApiPath(request.url)) return refuse();
      // A 401 goes through the error handler, as a failed onRequest check does.
      authenticate(verify, request.headers.authorization, refuse, (failure) => sendError(failure as FastifyError, request, reply));
    },
  }).withTypeProvider<TypeBoxTypeProvider>();
  const completed = trackCompletedRequests(app);
  const refusal = createServerRefusals(app);

  // Only JSON bodies: text/plain would otherwise reach handlers as a string.
  app.removeContentTypeParser("text/plain");
  registerJsonBodyParser(app);
  registerErrorHandling(app);
  closeAfterEarlyAnswers(app);
  // Hot list pages are served from memory for walletListCacheMs; any successful write made
  // through this process clears them, so a caller always reads its own writes: also a write
  // answered 503 at its deadline and carried out afterwards (its retry may be a 409).
  const readCache = createReadCache(deps.config.walletListCacheMs);
  // Before any route: it wraps their handlers as they are added.
  registerRequestDeadline(app, deps.config.requestTimeoutMs, {
    onLateSettle: (request) => {
      if (request.method !== "GET" && request.method !== "HEAD") readCache.clear();
    },
  });
  app.decorateRequest("caller");

  // One hook admits every request, in this order: request id, authentication, scope, what the
  // server refuses whatever the route (while it drains; an Expect it cannot meet), rate
  // limit. Authentication comes before parsing and validation, so a request without a valid
  // token is a 401 whatever else is wrong with it; unknown /v1 routes are covered too. It is
  // a callback hook, and a known token is checked without waiting: this runs on every request.
  const rateLimit = createRateLimiter(app, deps);
  const admit = (request: FastifyRequest, reply: FastifyReply, caller: Caller, scope: string | undefined, done: (error?: Error) => void) => {
    request.caller = caller;
    if (scope && !caller.scopes.has(scope) && !caller.scopes.has("admin")) return done(insufficientScope(scope));
    done(refusal(request) ?? rateLimit(caller.sub, reply));
  };
  app.addHook("onRequest", (request, reply, done) => {
    reply.header("x-request-id", request.id);
    if (shuttingDown()) reply.header("connection", "close");
    // By the route matched, not the URL as spelled (see api-paths.ts); no route: by the path.
    const { url: route, config } = request.routeOptions;
    if (!(route === undefined ? isApiPath(request.url) : isApiRoute(route))) return done(refusal(request));
    if (config?.public) return done(refusal(request));
    // Callbacks passed as they are, not held in a named const: tsx keeps function names, and
    // names one by redefining its `name`, about a microsecond for each request.
    authenticate(
      verify,
      request.headers.authorization,
      (caller) => admit(request, reply, caller, config?.scope, done),
      (failure) => done(failure as Error),
    );
  });

  completed.observe((request, reply, ms) => {
    if (request.method !== "GET" && request.method !== "HEAD" && reply.statusCode < 400) readCache.clear();
    // Through the service's logger: the line every request writes does not make a request's own
    // (lazy-request-logger.ts). A successful probe's is at debug (request-log-line.ts).
    const level = requestLogLevel(request.routeOptions.url, reply.statusCode);
    if (deps.logger.isLevelEnabled(level)) deps.logger[level](requestLogFields(request, reply, ms), "request");
  });

  await app.register(swagger, {
    openapi: {
      openapi: "3.1.0",
      info: {
        title: "wallet-alerts",
        version: "1.0.0",
        description: "Tracked Solana wallets, their transactions and risk alerts.",
      },
      servers: [{ url: "/" }],
      components: {
        securitySchemes: {
          bearer: {
            type: "http",
            scheme: "bearer",
            bearerFormat: "JWT",
            // Each operation's security names the scope it needs (openapi-operations.ts).
            description:
              "A JWT whose scope claim (space-separated) or scp claim holds the scope each operation's security lists; admin grants every scope",
          },
          // POST /v1/ingest/helius answers 401 without it: Helius cannot send a JWT.
          [HELIUS_AUTH_SCHEME]: {
            type: "apiKey",
            in: "header",
            name: "Authorization",
            description: "the webhook's auth header: Authorization equal to HELIUS_AUTH_HEADER, as set on the Helius webhook (not a JWT)",
          },
        },
      },
      security: [{ bearer: [] }],
      // What the service POSTs to a webhookUrl (OpenAPI 3.1 webhooks).
      webhooks: webhooksDocument(),
    },
    // Shared schemas under their $id ("Problem", "WalletDetail", …), not @fastify/swagger's def-0, def-1, …:
    // clients generated from the document name their types after these keys.
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === "string" ? json.$id : `def-${i}`) },
    // Query integers as the integers a client sends, though the validator takes them as strings (schemas.ts).
    transform: ({ schema, url }) => ({ schema: documentQueryIntegers(schema) ?? schema, url }),
    // X-Request-Id and RateLimit-* on every response that carries them, so that no route can forget them.
    transformObject: (documentObject) =>
      "openapiObject" in documentObject
        ? typeStringEnums(declareResponseHeaders(liftRequiredHeaders(documentObject.openapiObject)))
        : documentObject.swaggerObject,
  });
  await app.register(swaggerUi, { routePrefix: "/docs" });
  // Problem and the resources (WalletDetail, RiskAlert, …): components.schemas, each use a $ref (schema-components.ts).
  for (const schema of NAMED_SCHEMAS) app.addSchema(schema);

  // Unknown query parameters are refused on every /v1 route (DESIGN.md section 3), also on
  // those that take none. The public ones (the Helius webhook, the OpenAPI document) are
  // called by tools that may add parameters of their own.
  app.addHook("onRoute", (route) => {
    if (!isApiRoute(route.url) || route.config?.public) return;
    route.schema = { ...route.schema, querystring: route.schema?.querystring ?? NO_QUERY };
  });
  // Each operation's operationId and the scope it needs, in the document.
  app.addHook("onRoute", createOperationDocumenter());

  await app.register(adminPlugin(deps, completed));
  await app.register(healthRoutes(deps, shuttingDown));
  await app.register(v1Routes(deps, readCache), { prefix: "/v1" });
  app.get("/v1/openapi.json", { config: { public: true }, schema: { hide: true } }, async () => app.swagger());

  return app;
}

export type AppInstance = Awaited<ReturnType<typeof buildApp>>;
