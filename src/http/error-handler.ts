// The one place that maps errors to HTTP. Everything leaves as problem+json; the message of
// an unexpected error is logged with the request's context and never shown to the caller.
import { randomUUID } from "node:crypto";
import { maxHeaderSize } from "node:http";
import type { Socket } from "node:net";
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { isUnavailableError } from "../dependency-errors.ts";
import { createRepeatedWarning } from "../log-repeats.ts";
import type { Logger } from "../logger.ts";
import {
  PROBLEM_CONTENT_TYPE,
  ProblemError,
  problemBody,
  type FieldError,
  type ProblemCode,
} from "./problem.ts";
import { NO_NUL_PATTERN } from "./schemas.ts";

type ValidationIssue = {
  instancePath?: string;
  keyword?: string;
  message?: string;
  params?: Record<string, unknown>;
  parentSchema?: { description?: string };
  /** The value that failed (ajv verbose mode). */
  data?: unknown;
};

const FRAMEWORK_CODES: Record<string, ProblemCode> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: "unsupported_media_type",
  FST_ERR_CTP_BODY_TOO_LARGE: "payload_too_large",
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: "validation_failed",
  FST_ERR_CTP_EMPTY_JSON_BODY: "validation_failed",
  FST_ERR_CTP_INVALID_JSON_BODY: "validation_failed",
  FST_ERR_BAD_URL: "validation_failed",
  FST_ERR_ASYNC_CONSTRAINT: "validation_failed",
  FST_ERR_NOT_FOUND: "not_found",
};

// Values that passed validation but that PostgreSQL cannot store (a NUL character in text,
// a number outside a column's range): the caller's input, so a 400, never a 500.
const POSTGRES_INPUT_ERRORS: Record<string, string> = {
  "22021": "a text value contains a character that cannot be stored (such as NUL)",
  "22P05": "a text value contains a character that cannot be stored (such as NUL)",
  "22001": "a text value is longer than can be stored",
  "22003": "a number is out of the range that can be stored",
  "22008": "a date or time is out of range",
};

function postgresInputError(error: unknown): string | undefined {
  const seen = new Set<unknown>();
  let current: unknown = error;
  while (current && typeof current === "object" && !seen.has(current)) {
    seen.add(current);
    const { code } = current as { code?: unknown };
    if (typeof code === "string" && POSTGRES_INPUT_ERRORS[code]) return POSTGRES_INPUT_ERRORS[code];
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

export function sendProblem(
  reply: FastifyReply,
  code: ProblemCode,
  detail: string,
  options: { errors?: FieldError[]; headers?: Record<string, string> } = {},
): FastifyReply {
  const body = problemBody(code, detail, String(reply.request.id), options.errors);
  for (const [name, value] of Object.entries(options.headers ?? {})) reply.header(name, value);
  return reply.code(body.status).type(PROBLEM_CONTENT_TYPE).send(body);
}

/**
 * Answers a request that Node's HTTP parser refused before Fastify saw it (an over-long URL
 * or header section, a timeout, bytes that are not HTTP) with a problem+json 400 too, then
 * closes the connection. No request exists yet, so no token can be checked first.
 */
export function answerClientError(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === "ECONNRESET" || socket.destroyed) return;
  const detail =
    error.code === "HPE_HEADER_OVERFLOW"
      ? `the request line and headers are too long (over ${maxHeaderSize} bytes together)`
      : error.code === "ERR_HTTP_REQUEST_TIMEOUT"
        ? "the request did not arrive in time"
        : "the request is not valid HTTP";
  // Its own id, as on every other answer (the OpenAPI document says so of every one).
  const requestId = randomUUID();
  const body = JSON.stringify(problemBody("validation_failed", detail, requestId));
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 400 Bad Request\r\nContent-Type: ${PROBLEM_CONTENT_TYPE}; charset=utf-8\r\n` +
        `X-Request-Id: ${requestId}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}

export function validationErrors(issues: ValidationIssue[], context: string | undefined): FieldError[] {
  return issues.map((issue) => {
    const base = context ?? "body";
    let path = `${base}${(issue.instancePath ?? "").replaceAll("/", ".")}`;
    let message = issue.message ?? "is not valid";
    if (base === "querystring" && Array.isArray(issue.data)) {
      // Every query value is a string; the parser makes a list of a parameter given twice.
      message = "is given more than once; give it once";
    } else if (issue.keyword === "additionalProperties") {
      path = `${path}.${String(issue.params?.additionalProperty)}`;
      message = "is not a known field";
    } else if (issue.keyword === "required") {
      path = `${path}.${String(issue.params?.missingProperty)}`;
      message = "is required";
    } else if (issue.keyword === "pattern" && issue.params?.pattern === NO_NUL_PATTERN) {
      message = "must not contain a NUL character (\\u0000)";
    } else if (issue.keyword === "pattern" && issue.parentSchema?.description) {
      message = `must be ${issue.parentSchema.description}`;
    } else if (issue.keyword === "enum" && Array.isArray(issue.params?.allowedValues)) {
      message = `must be one of ${(issue.params.allowedValues as unknown[]).join(", ")}`;
    } else if (issue.keyword === "minProperties") {
      message = issue.parentSchema?.description ? `must ${issue.parentSchema.description}` : "must give at least one field";
    }
    if (path.startsWith("querystring")) path = path.replace(/^querystring/, "query");
    return { path, message };
  });
}

/** "is not a known field" for a field the route keeps fixed says why, and what to do instead. */
function withFixedFields(errors: FieldError[], fixed: Readonly<Record<string, string>> | undefined): FieldError[] {
  if (!fixed) return errors;
  return errors.map((error) => {
    const field = error.path.startsWith("body.") ? error.path.slice("body.".length) : undefined;
    const instead = field === undefined ? undefined : fixed[field];
    return instead !== undefined && error.message === "is not a known field" ? { ...error, message: instead } : error;
  });
}

export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler(sendError);

  app.setNotFoundHandler((request, reply) =>
    sendProblem(reply, "not_found", `no route for ${request.method} ${request.url.split("?")[0]}`),
  );
}

// While Postgres or Redis is down every request fails alike: one warning per kind a minute per
// app (with the first request's id), the rest at debug, instead of a line per request.
const unavailableWarnings = new WeakMap<FastifyInstance, ReturnType<typeof createRepeatedWarning>>();
function unavailableWarning(app: FastifyInstance): ReturnType<typeof createRepeatedWarning> {
  let warn = unavailableWarnings.get(app);
  if (!warn) {
    warn = createRepeatedWarning(app.log as Logger, "dependency unavailable");
    unavailableWarnings.set(app, warn);
  }
  return warn;
}

/** Answers any error as the problem it is (the error handler; also used before routing). */
export function sendError(
  error: FastifyError & { validation?: ValidationIssue[]; validationContext?: string },
  request: FastifyRequest,
  reply: FastifyReply,
): FastifyReply {
  if (error instanceof ProblemError) {
    return sendProblem(reply, error.code, error.message, { errors: error.errors, headers: error.headers });
  }
  if (error.validation) {
    const errors = withFixedFields(validationErrors(error.validation, error.validationContext), request.routeOptions.config?.fixedFields);
    const detail = errors.map((e) => `${e.path} ${e.message}`).join("; ");
    return sendProblem(reply, "validation_failed", detail, { errors });
  }
  const frameworkCode = error.code ? FRAMEWORK_CODES[error.code] : undefined;
  if (frameworkCode) return sendProblem(reply, frameworkCode, frameworkDetail(error, request));
  if (error.statusCode === 429) {
    return sendProblem(reply, "rate_limited", error.message);
  }
  const inputError = postgresInputError(error);
  if (inputError) return sendProblem(reply, "validation_failed", inputError);
  if (isUnavailableError(error)) {
    unavailableWarning(request.server)(error, { requestId: request.id });
    return sendProblem(reply, "unavailable", "a backing service is unavailable; retry shortly", {
      headers: { "retry-after": "5" },
    });
  }
  if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) {
    // A client error raised by Fastify or a plugin that has no code of its own above.
    return sendProblem(reply, error.statusCode === 415 ? "unsupported_media_type" : "validation_failed", error.message);
  }
  request.log.error({ err: error }, "unhandled error");
  return sendProblem(reply, "internal", "an internal error occurred; it has been logged with this requestId");
}

function frameworkDetail(error: FastifyError, request: FastifyRequest): string {
  switch (error.code) {
    case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
      return `Content-Type ${request.headers["content-type"] ?? "(none)"} is not accepted; send application/json`;
    case "FST_ERR_CTP_BODY_TOO_LARGE":
      return "the request body is larger than this endpoint accepts";
    case "FST_ERR_CTP_EMPTY_JSON_BODY":
      return "the body is empty; send a JSON document";
    case "FST_ERR_CTP_INVALID_JSON_BODY":
      return "the body is not valid JSON";
    case "FST_ERR_BAD_URL":
      return "the URL is malformed (bad percent-encoding)";
    default:
      return error.message;
  }
}
