// Schema pieces shared by the routes. Query values arrive as strings (the interface says
// so) and must be canonical whole numbers; the range is checked by parseQueryInteger so
// that the error names the parameter and the allowed range. The OpenAPI document shows
// them as the integers they are (documentAsInteger).
import { Type, type Static, type TSchema } from "@fastify/type-provider-typebox";
import { ADDRESS_PATTERN, SIGNATURE_PATTERN, isAddress, isSignature } from "../domain/base58.ts";
import { CAP_SETTINGS, PROBLEM_CODES, PROBLEM_CONTENT_TYPE, invalid, type ProblemCode } from "./problem.ts";

export const ProblemSchema = Type.Object(
  {
    type: Type.String(),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    code: Type.Enum(Object.keys(PROBLEM_CODES) as ProblemCode[]),
    errors: Type.Optional(Type.Array(Type.Object({ path: Type.String(), message: Type.String() }))),
    // An extension member (RFC 9457 section 3.2): what tells a cap's 409 from the other conflicts.
    limit: Type.Optional(
      Type.Object(
        {
          setting: Type.Enum(CAP_SETTINGS, { description: "the setting whose cap refused the request" }),
          max: Type.Integer({ minimum: 1, description: "the setting's value: how many the caller may have" }),
        },
        {
          description:
            "present on a 409 that a cap refused: waiting does not help; the setting names the cap. " +
            "Delete what you no longer need, or ask the operator to raise the setting. Absent on every other problem, " +
            "so a 409 without it is a conflict with one resource (an address already tracked, an Idempotency-Key used already)",
        },
      ),
    ),
    requestId: Type.String(),
  },
  { $id: "Problem", description: "RFC 9457 problem details" },
);

/**
 * Where a named schema is used: a $ref to its $id. A named schema (Problem, WalletDetail, …) is
 * given an $id and registered with app.addSchema (schema-components.ts): the OpenAPI document
 * shows it once, under components.schemas by that $id, and each use as a $ref to it, so that a
 * generated client names its type; Fastify's serializer resolves the $ref to the schema itself,
 * so an answer is shaped as it was by the schema inline. Typed as the schema, so that the type
 * provider still checks what a handler returns.
 */
export function refTo<T extends TSchema>(schema: T) {
  const id = (schema as { $id?: unknown }).$id;
  if (typeof id !== "string") throw new Error("refTo: a schema without an $id is not one the document names");
  return Type.Unsafe<Static<T>>(Type.Ref(id));
}

/**
 * Error responses under the media type they are sent with (application/problem+json), so
 * the OpenAPI document says what clients get; Fastify serializes a reply with the schema
 * of its status and media type.
 */
export const problemResponses = (...statuses: number[]) =>
  Object.fromEntries(
    statuses.map((status) => [
      status,
      {
        description: "RFC 9457 problem details",
        ...(PROBLEM_HEADERS[status] ? { headers: PROBLEM_HEADERS[status] } : {}),
        content: { [PROBLEM_CONTENT_TYPE]: { schema: Type.Ref("Problem") } },
      },
    ]),
  );

/**
 * A response header for the OpenAPI document. `required` marks one the service sends every
 * time; liftRequiredHeaders() puts it where OpenAPI reads it.
 */
const header = (description: string, required: boolean) => ({ type: "string", description, ...(required ? { required: true } : {}) });

const RETRY_AFTER = header("seconds to wait before trying again", true);
const PROBLEM_HEADERS: Record<number, Record<string, ReturnType<typeof header>>> = {
  401: { "www-authenticate": header('how to authenticate: Bearer with error="invalid_token" (RFC 6750), or HeliusAuthHeader on the Helius webhook', true) },
  403: { "www-authenticate": header('for a missing scope: error="insufficient_scope" and the scope needed (RFC 6750)', false) },
  429: { "retry-after": RETRY_AFTER },
  503: { "retry-after": RETRY_AFTER },
};

/** A success response with what it is for the OpenAPI document (else "Default Response"). */
export const described = <T extends TSchema>(schema: T, description: string) => ({
  description,
  content: { "application/json": { schema } },
});

/**
 * A response with a Location header (a 201's new resource, a 202's notification), for the
 * OpenAPI document; `extraHeaders` are sent on some answers only (Idempotent-Replayed).
 */
export const withLocation = <T extends TSchema>(
  schema: T,
  description: string,
  location: string,
  extraHeaders: Record<string, string> = {},
) => ({
  ...described(schema, description),
  headers: {
    location: header(location, true),
    ...Object.fromEntries(Object.entries(extraHeaders).map(([name, meaning]) => [name, header(meaning, false)])),
  },
});

/**
 * Cache-Control: no-store, for an answer that holds a secret (an alert create's webhookSecret, a
 * rotation's new one): no cache on the way, nor the client's own (RFC 9111 section 5.2.2.5),
 * may keep it. `noStore(response)` documents it on the response; the handler sends it.
 */
export const NO_STORE = "no-store";
export const noStore = <R extends object>(response: R) => ({
  ...response,
  headers: {
    ...(response as { headers?: Record<string, unknown> }).headers,
    "cache-control": header(`${NO_STORE}: the answer holds a secret, which no cache may keep`, true),
  },
});

type DocumentHeaders = Record<string, { required?: boolean; schema?: { required?: unknown } }>;
type DocumentPaths = Record<string, Record<string, { responses?: Record<string, { headers?: DocumentHeaders }> }>>;

/**
 * @fastify/swagger copies a response header's whole definition into the header's `schema`,
 * where OpenAPI does not read `required` (and where a boolean `required` is not JSON Schema):
 * this moves it up to the header, so clients learn which headers are always there.
 */
export function liftRequiredHeaders<T extends { paths?: unknown }>(document: T): T {
  for (const operations of Object.values((document.paths ?? {}) as DocumentPaths)) {
    for (const operation of Object.values(operations)) {
      for (const response of Object.values(operation.responses ?? {})) {
        for (const definition of Object.values(response.headers ?? {})) {
          if (definition.schema?.required !== true) continue;
          delete definition.schema.required;
          definition.required = true;
        }
      }
    }
  }
  return document;
}

/**
 * Error responses every authenticated route can give, for the OpenAPI document; 500 is the
 * error handler's answer to whatever nobody planned for.
 */
export const errorResponses = (...statuses: number[]) => problemResponses(401, 403, 429, 500, 503, ...statuses);

export function queryInteger(options: { min: number; max: number; default: number; description: string }) {
  return documentAsInteger(
    Type.Optional(
      Type.String({
        pattern: "^(0|[1-9][0-9]{0,8})$",
        description: `${options.description}: a whole number from ${options.min} to ${options.max} (default ${options.default})`,
        default: String(options.default),
      }),
    ),
    options,
  );
}

/** Where a query integer keeps what the OpenAPI document shows for it: a symbol, which neither ajv nor JSON sees. */
const DOCUMENTED_AS = Symbol("documented as");
const INT32_MAX = 2 ** 31 - 1;

/**
 * Query integers stay strings to the validator, on purpose: ajv does not coerce here, so
 * "01", "+1", "1.0" and "1e2" are refused rather than read as numbers, and a bad value's
 * message names the parameter and its range (parseQueryInteger); tests pin those messages.
 * A client sends an integer all the same, and one generated from a `string` parameter would
 * take any text: so the document shows `integer` with the bounds and default the server
 * enforces, put in place of the string schema by documentQueryIntegers().
 */
export function documentAsInteger<T extends TSchema>(schema: T, bounds: { min: number; max: number; default?: number }): T {
  (schema as T & { [DOCUMENTED_AS]?: object })[DOCUMENTED_AS] = {
    type: "integer",
    // Without a format, some generators make an int32 of it; Unix seconds need 64 bits.
    format: bounds.max > INT32_MAX ? "int64" : "int32",
    minimum: bounds.min,
    maximum: bounds.max,
    ...(bounds.default === undefined ? {} : { default: bounds.default }),
  };
  return schema;
}

/**
 * A route's schema as the OpenAPI document should show it (@fastify/swagger's transform):
 * each query integer as its integer, with its description. A copy: the route keeps validating
 * with its own.
 */
export function documentQueryIntegers<T extends { querystring?: unknown }>(schema: T | undefined): T | undefined {
  const query = schema?.querystring as { properties?: Record<string, { description?: string; [DOCUMENTED_AS]?: object }> } | undefined;
  if (!schema || !query?.properties) return schema;
  const properties = Object.fromEntries(
    Object.entries(query.properties).map(([name, property]) => {
      const documented = property[DOCUMENTED_AS];
      if (!documented) return [name, property];
      return [name, { ...documented, ...(property.description === undefined ? {} : { description: property.description }) }];
    }),
  );
  return { ...schema, querystring: { ...query, properties } };
}

/** Where a body integer keeps that its failures are worded as its range: a symbol, which neither ajv nor JSON sees. */
const WORDED_AS_RANGE = Symbol("worded as a range");

/**
 * A whole number from minimum to maximum in a body, whose wrong value (-5, 1.5, 604801) the
 * error handler tells its range in a query integer's words, "must be a whole number from 0 to
 * 604800", rather than in ajv's ("must be >= 0", "must be integer").
 */
export function wholeNumber(options: { minimum: number; maximum: number; description?: string }) {
  const schema = Type.Integer(options);
  (schema as typeof schema & { [WORDED_AS_RANGE]?: true })[WORDED_AS_RANGE] = true;
  return schema;
}

/** Whether a schema is a wholeNumber (the schema of an issue the error handler words). */
export const wordedAsRange = (schema: object | undefined): boolean =>
  (schema as { [WORDED_AS_RANGE]?: true } | undefined)?.[WORDED_AS_RANGE] === true;

/** Reads a validated query integer and checks its range; absent → the default. */
export function parseQueryInteger(
  name: string,
  raw: string | undefined,
  /** pastMax: what to do instead, said when a whole number above max was given. */
  options: { min: number; max: number; default: number; pastMax?: string },
): number {
  if (raw === undefined) return options.default;
  const value = Number(raw);
  const whole = /^(0|[1-9][0-9]*)$/.test(raw);
  if (!whole || value < options.min || value > options.max) {
    const range = `must be a whole number from ${options.min} to ${options.max}`;
    throw invalid(`query.${name}`, whole && value > options.max && options.pastMax ? `${range}; ${options.pastMax}` : range);
  }
  return value;
}

export const AddressSchema = Type.String({
  pattern: ADDRESS_PATTERN,
  description: "a Solana address (base58 of 32 bytes)",
});

export const SignatureSchema = Type.String({
  pattern: SIGNATURE_PATTERN,
  description: "a transaction signature (base58 of 64 bytes)",
});

/** The JSON schema pattern is a pre-check; this checks the decoded length. */
export function assertAddress(path: string, value: string): void {
  if (!isAddress(value)) throw invalid(path, "must be a Solana address (base58 of 32 bytes)");
}

export function assertSignature(path: string, value: string): void {
  if (!isSignature(value)) throw invalid(path, "must be a transaction signature (base58 of 64 bytes)");
}

/**
 * No NUL: Postgres cannot take one in a text parameter, and its refusal named no field (a
 * feed's NUL-padded token name refused a batch of 1,000 snapshots without saying which).
 * The error handler words this pattern's failure itself.
 */
export const NO_NUL_PATTERN = "^[^\\u0000]*$";

/** Free text the service stores, as the caller sends it: any character but NUL. */
export const textSchema = (options: { minLength?: number; maxLength: number; description?: string }) =>
  Type.String({ ...options, pattern: NO_NUL_PATTERN });

// Any other id we did not issue is simply not found (404).
export const idSchema = (prefix: string, what: string) =>
  Type.String({ minLength: 1, maxLength: 64, pattern: NO_NUL_PATTERN, description: `${what} id (${prefix}_…)` });

/** ISO 8601 UTC with Z, as every date-time in the API. */
export const isoDate = (date: Date | null): string | null => (date ? date.toISOString() : null);
