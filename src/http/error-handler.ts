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
  type ProblemOptions,
} from "./problem.ts";
import { NO_NUL_PATTERN, documentQueryIntegers, wordedAsRange } from "./schemas.ts";

type ValidationIssue = {
  instancePath?: string;
  /** Where in the schema the failing keyword is (`#/properties/alias/anyOf/0/minLength`). */
  schemaPath?: string;
  keyword?: string;
  message?: string;
  params?: Record<string, unknown>;
  /** The failing keyword's value (ajv verbose mode): an anyOf's branches. */
  schema?: unknown;
  parentSchema?: { description?: string; type?: unknown; minimum?: unknown; maximum?: unknown; minItems?: unknown; maxItems?: unknown };
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
  options: ProblemOptions = {},
): FastifyReply {
  const errors = options.errors ?? (code === "validation_failed" ? wholePartError(detail) : undefined);
  const body = problemBody(code, detail, String(reply.request.id), errors, options.extensions);
  for (const [name, value] of Object.entries(options.headers ?? {})) reply.header(name, value);
  return reply.code(body.status).type(PROBLEM_CONTENT_TYPE).send(body);
}

/**
 * The one `errors` entry of a 400 about a whole part of the request rather than a field in it
 * (README: `errors[].path` names each offending place): the body (not JSON, empty, not UTF-8),
 * the URL (bad percent-encoding) or the path parameters (one too long). Read from the detail,
 * as the router's refusals (app.ts's ROUTER_ERRORS) reach sendProblem with nothing else; a
 * detail of another kind gets none.
 */
function wholePartError(detail: string): FieldError[] | undefined {
  const part = /^the (body|URL) (.+)$/.exec(detail);
  if (part) return [{ path: part[1] === "URL" ? "url" : "body", message: part[2]! }];
  const param = /^a path parameter (is longer than .+)$/.exec(detail);
  if (param) return [{ path: "params", message: `has a value that ${param[1]}` }];
  return undefined;
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

/**
 * A 400 lists at most this many problems, then says how many more. With every issue reported
 * (ajv's allErrors), a 1 MiB body of 500,000 bad array items listed each of them: a 44 MB
 * answer that took seconds to build while every other request waited. The first ones show
 * what is wrong; the client fixes those and learns of the rest, if any, on its next try.
 */
export const MAX_LISTED_ERRORS = 50;

/** What a query parameter, or a JSON key in one object (json-body.ts), given twice is told. */
export const GIVEN_TWICE = "is given more than once; give it once";

/** A path longer than this (an unknown field's name is the caller's text) is shown cut. */
const MAX_SHOWN_PATH = 200;

/** Every issue as a field error (a caller that caps its own list: the Helius route, per item). */
export function validationErrors(all: ValidationIssue[], context: string | undefined): FieldError[] {
  const issues = emptySaidOnce(all);
  const errors: FieldError[] = [];
  for (let at = 0; at < issues.length; ) {
    const end = problemEnd(issues, at);
    errors.push(...problemErrors(issues, at, end, context));
    at = end;
  }
  return errors;
}

/**
 * The first MAX_LISTED_ERRORS problems as field errors, then one saying how many more. Only those
 * are worded: the rest are counted, so the cost of a 400 hardly grows with the number of issues.
 */
export function listedValidationErrors(all: readonly ValidationIssue[], context: string | undefined): FieldError[] {
  const issues = emptySaidOnce(all);
  const listed: FieldError[] = [];
  let more = 0;
  for (let at = 0; at < issues.length; ) {
    const end = problemEnd(issues, at);
    if (listed.length < MAX_LISTED_ERRORS) listed.push(...problemErrors(issues, at, end, context));
    else more += 1;
    at = end;
  }
  more += Math.max(0, listed.length - MAX_LISTED_ERRORS);
  listed.length = Math.min(listed.length, MAX_LISTED_ERRORS);
  if (more <= 0) return listed;
  return [...listed, { path: publicBase(context), message: `has ${more} more problems not listed` }];
}

/**
 * An empty value where at least one character is needed, said once: "must not be empty". Where
 * the field also has a pattern or a format, ajv reports that too, and an empty Idempotency-Key
 * read "must not be empty; must be a key of 1-255 visible ASCII characters, …", two messages for
 * one problem. One pass, and a copy only when there is such a value.
 */
function emptySaidOnce(issues: readonly ValidationIssue[]): readonly ValidationIssue[] {
  let empty: Set<string> | undefined;
  for (const issue of issues) {
    if (issue.keyword === "minLength" && issue.params?.limit === 1 && issue.data === "") (empty ??= new Set()).add(issue.instancePath ?? "");
  }
  if (empty === undefined) return issues;
  const said = empty;
  const repeatsEmpty = (issue: ValidationIssue) =>
    (issue.keyword === "pattern" || issue.keyword === "format") && issue.data === "" && said.has(issue.instancePath ?? "");
  return issues.filter((issue) => !repeatsEmpty(issue));
}

// ---- One problem, one entry ---------------------------------------------------------------------
// A field that may also be null (`alias`: 1–64 characters, or null) is an anyOf of its type and
// null. A value that is neither made ajv report three issues at that path: the first branch's
// ("must NOT have fewer than 1 characters"), the null branch's ("must be null", which told the
// caller to send null) and the anyOf's own ("must match a schema in anyOf"). They are one
// problem, said once: ajv reports a branch's issues just before its anyOf's, so the group is
// found by reading ahead from its first issue.

/** The index after the issues that make one problem with issues[at]: a nullable field's group, or issues[at] alone. */
function problemEnd(issues: readonly ValidationIssue[], at: number): number {
  const anyOf = nullableAnyOf(issues[at]!);
  if (anyOf === undefined) return at + 1;
  let end = at;
  while (end < issues.length && issues[end]!.schemaPath?.startsWith(`${anyOf}/`)) end += 1;
  const closing = issues[end];
  const closes = closing?.keyword === "anyOf" && closing.schemaPath === anyOf && closing.instancePath === issues[at]!.instancePath;
  return closes && hasNullBranch(closing.schema) ? end + 1 : at + 1;
}

/** The schema path of the anyOf an issue of one of its branches is under (the innermost), or undefined. */
function nullableAnyOf(issue: ValidationIssue): string | undefined {
  const path = issue.schemaPath ?? "";
  const cut = path.lastIndexOf("/anyOf/");
  return cut < 0 ? undefined : path.slice(0, cut + "/anyOf".length);
}

const hasNullBranch = (branches: unknown): boolean =>
  Array.isArray(branches) && branches.some((branch) => (branch as { type?: unknown } | null)?.type === "null");

/** What a type is called in a message: "must be a string or null". */
const TYPE_NAMES: Record<string, string> = {
  string: "a string",
  number: "a number",
  integer: "a whole number",
  boolean: "true or false",
  object: "an object",
  array: "an array",
};

/** What a type, or a list of them (`["array", "null"]`, ajv's "array,null"), is called: "an array or null". */
function typeNames(types: unknown): string {
  const list = Array.isArray(types) ? types.map(String) : String(types).split(",");
  return list.map((type) => TYPE_NAMES[type] ?? type).join(" or ");
}

/**
 * What a value of a format must be, in words that say what to send. A date-time needs its offset
 * (ajv-formats' date-time, RFC 3339): "2026-11-01T00:00:00" is ISO 8601 but names no instant.
 */
const FORMAT_WORDS: Record<string, string> = {
  "date-time": "must be a date-time with a time zone (such as 2026-11-20T00:00:00Z)",
  date: "must be a date (such as 2026-11-20)",
  uri: "must be an absolute URL (such as https://hooks.example.com/risk)",
  email: "must be an email address",
  uuid: "must be a UUID",
};

/** How many items a list may have, from its schema's bounds: "must list 1 to 1000 items". */
function itemCount(schema: { minItems?: unknown; maxItems?: unknown } | undefined): string {
  const min = typeof schema?.minItems === "number" ? schema.minItems : 0;
  const max = typeof schema?.maxItems === "number" ? schema.maxItems : undefined;
  const items = (n: number) => `${n} ${n === 1 ? "item" : "items"}`;
  if (max === undefined) return `must list at least ${items(min)}`;
  if (min === 0) return `must list at most ${items(max)}`;
  return min === max ? `must list exactly ${items(min)}` : `must list ${min} to ${items(max)}`;
}

/** The field errors of issues[from, to): each issue's own, or a nullable field's one (see above). */
function problemErrors(issues: readonly ValidationIssue[], from: number, to: number, context: string | undefined): FieldError[] {
  if (to === from + 1) return [fieldError(issues[from]!, context)];
  const anyOf = issues[to - 1]!;
  const branches = anyOf.schema as { type?: unknown }[];
  const nullBranch = `${anyOf.schemaPath}/${branches.findIndex((branch) => branch?.type === "null")}/`;
  const valueIssues = issues.slice(from, to - 1).filter((issue) => !issue.schemaPath?.startsWith(nullBranch));
  const path = fieldError(anyOf, context).path;
  // Of another type than the field's (or of none of its branches): one sentence for all.
  const wrongType = valueIssues.find((issue) => issue.keyword === "type");
  if (wrongType || valueIssues.length === 0) {
    const name = TYPE_NAMES[String(wrongType?.params?.type)];
    return [{ path, message: name ? `must be ${name} or null` : "must be a value of the field's type, or null" }];
  }
  // Of the field's type but not right for it: what is wrong with it, and that null is the way to say none.
  return valueIssues.map((issue) => {
    const error = fieldError(issue, context);
    if (issue.keyword === "minLength" && issue.params?.limit === 1) return { ...error, message: "must not be empty: send null for none" };
    return error.message.startsWith("must be ") ? { ...error, message: `${error.message} or null` } : error;
  });
}

function fieldError(issue: ValidationIssue, context: string | undefined): FieldError {
  const base = context ?? "body";
  let path = `${base}${(issue.instancePath ?? "").replaceAll("/", ".")}`;
  let message = issue.message ?? "is not valid";
  const range = issue.keyword === "pattern" ? queryIntegerRange(issue.parentSchema) : undefined;
  if (base === "querystring" && Array.isArray(issue.data)) {
    // Every query value is a string; the parser makes a list of a parameter given twice.
    message = GIVEN_TWICE;
  } else if (issue.keyword === "additionalProperties") {
    path = `${path}.${String(issue.params?.additionalProperty)}`;
    message = "is not a known field";
  } else if (issue.keyword === "required") {
    path = `${path}.${String(issue.params?.missingProperty)}`;
    message = "is required";
  } else if (issue.keyword === "pattern" && issue.params?.pattern === NO_NUL_PATTERN) {
    message = "must not contain a NUL character (\\u0000)";
  } else if (range) {
    // In the words of the range check (parseQueryInteger), which limit=101 meets: limit=abc
    // said "must be results per page: a whole number from 1 to 100 (default 25)".
    message = `must be a whole number from ${range.minimum} to ${range.maximum}`;
  } else if (issue.keyword === "pattern" && issue.parentSchema?.description) {
    message = `must be ${issue.parentSchema.description}`;
  } else if (issue.keyword === "enum" && Array.isArray(issue.params?.allowedValues)) {
    message = `must be one of ${(issue.params.allowedValues as unknown[]).join(", ")}`;
  } else if (issue.keyword === "minProperties") {
    message = issue.parentSchema?.description ? `must ${issue.parentSchema.description}` : "must give at least one field";
  } else if (issue.keyword === "minLength") {
    // An empty value (?walletId=, "token": "") said "must NOT have fewer than 1 characters".
    message = issue.params?.limit === 1 ? "must not be empty" : `must be at least ${String(issue.params?.limit)} characters`;
  } else if (issue.keyword === "maxLength") {
    message = `must be at most ${String(issue.params?.limit)} characters`;
  } else if (issue.keyword === "uniqueItems") {
    // ajv: "must NOT have duplicate items (items ## 2 and 0 are identical)", at the list.
    path = `${path}.${String(issue.params?.j)}`;
    message = `is the same as item ${String(issue.params?.i)}; give each item once`;
  } else if (wordedAsRange(issue.parentSchema) && ["type", "minimum", "maximum"].includes(issue.keyword ?? "")) {
    // In the words of a query integer's range: "must be <= 604800" was ajv's.
    message = `must be a whole number from ${String(issue.parentSchema?.minimum)} to ${String(issue.parentSchema?.maximum)}`;
  } else if (issue.keyword === "type") {
    // ajv: "must be array", "must be array,null".
    message = `must be ${typeNames(issue.params?.type)}`;
  } else if (issue.keyword === "format") {
    // ajv: 'must match format "date-time"', for a time without a zone as for "yesterday".
    message = FORMAT_WORDS[String(issue.params?.format)] ?? `must be in the ${String(issue.params?.format)} format`;
  } else if (issue.keyword === "minItems" || issue.keyword === "maxItems") {
    // ajv: "must NOT have fewer than 1 items", "must NOT have more than 1000 items".
    message = itemCount(issue.parentSchema);
  }
  if (path.startsWith("querystring")) path = path.replace(/^querystring/, "query");
  return { path: shortened(path), message };
}

/** The bounds of a query integer (schemas.ts's queryInteger), as the OpenAPI document shows them; else undefined. */
function queryIntegerRange(schema: object | undefined): { minimum: number; maximum: number } | undefined {
  if (schema === undefined) return undefined;
  type Shown = { querystring: { properties: { value: { type?: unknown; minimum?: unknown; maximum?: unknown } } } };
  const shown = (documentQueryIntegers({ querystring: { properties: { value: schema } } }) as Shown).querystring.properties.value;
  const { type, minimum, maximum } = shown;
  return type === "integer" && typeof minimum === "number" && typeof maximum === "number" ? { minimum, maximum } : undefined;
}

/** Where a request part's problems are said to be: "querystring" is "query" to the caller. */
const publicBase = (context: string | undefined): string => (context === "querystring" ? "query" : (context ?? "body"));

export function shortened(path: string): string {
  if (path.length <= MAX_SHOWN_PATH) return path;
  const cut = path.slice(0, MAX_SHOWN_PATH);
  // Not half of a surrogate pair: the answer stays well-formed text.
  return `${/[\ud800-\udbff]$/.test(cut) ? cut.slice(0, -1) : cut}…`;
}

/** A failed validation's message: how many issues, not what they are (see registerErrorHandling). */
const countIssues = (issues: readonly unknown[], dataVar: string): Error => new Error(`${dataVar} has ${issues.length} problems`);

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
  // Fastify's own message for a failed validation joins every issue into one string that
  // nothing reads (sendError builds the 400 from the issues): for the 500,000 bad items of
  // MAX_LISTED_ERRORS's comment, 20 MB and half the time of the 400. Every route registered
  // after this (all of them) gets a message of constant size instead.
  app.addHook("onRoute", (route) => {
    route.schemaErrorFormatter ??= countIssues;
  });

  app.setNotFoundHandler((request, reply) =>
    sendProblem(reply, "not_found", `no route for ${request.method} ${request.url.split("?")[0]}`),
  );
}

// While Postgres or Redis is down every request fails alike: one warning per kind a minute per
// app (with the first request's id), the rest at debug, instead of a line per request. Kept by
// the app's HTTP server, which all its plugin contexts share: request.server is the context of
// the route's plugin (each /v1 route family is one), and keyed by it each family warned apart.
const unavailableWarnings = new WeakMap<object, ReturnType<typeof createRepeatedWarning>>();
function unavailableWarning(app: FastifyInstance): ReturnType<typeof createRepeatedWarning> {
  let warn = unavailableWarnings.get(app.server);
  if (!warn) {
    warn = createRepeatedWarning(app.log as Logger, "dependency unavailable");
    unavailableWarnings.set(app.server, warn);
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
    return sendProblem(reply, error.code, error.message, { errors: error.errors, headers: error.headers, extensions: error.extensions });
  }
  if (error.validation) {
    const errors = withFixedFields(listedValidationErrors(error.validation, error.validationContext), request.routeOptions.config?.fixedFields);
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
  // The client's failures before the dependency check: Node reports a client that hangs up
  // mid-body as ECONNRESET ("aborted"), the very code of a PostgreSQL or Redis connection reset.
  // Taken for an outage, it was a 503 and a warning that also silenced a real outage's warning
  // of that kind for a minute.
  if (request.raw.errored === error) {
    // The request's own stream failed: the client closed the connection. Nobody reads this
    // answer, and no request log line follows (no response finishes), so it is logged here.
    request.log.info({ err: error }, "request body cut short: the client closed the connection");
    return sendProblem(reply, "validation_failed", "the request body did not arrive whole: the connection closed");
  }
  if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) {
    // A client error raised by Fastify or a plugin that has no code of its own above.
    return sendProblem(reply, error.statusCode === 415 ? "unsupported_media_type" : "validation_failed", error.message);
  }
  if (isUnavailableError(error)) {
    unavailableWarning(request.server)(error, { requestId: request.id });
    return sendProblem(reply, "unavailable", "a backing service is unavailable; retry shortly", {
      headers: { "retry-after": "5" },
    });
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
