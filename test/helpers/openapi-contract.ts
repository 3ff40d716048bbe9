// Checks answers of the API against the OpenAPI document it publishes, as a client generated
// from that document alone would: the operation (method + path template) must list the
// status (or a default), the media type must be the one listed for it, every header marked
// required must be there, every header sent must be declared for that response and match its
// schema, and the body must satisfy the schema (Ajv, JSON Schema 2020-12 as OpenAPI 3.1 says,
// strict, formats checked). A field the schema does not name is an error too:
// fast-json-stringify drops such fields today, so one that appears means a response escaped
// its schema.
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormatsPlugin from "ajv-formats";

type Schema = Record<string, unknown>;
export type Header = { required?: boolean; description?: string; schema?: Schema };
type Response = { description?: string; headers?: Record<string, Header | { $ref: string }>; content?: Record<string, { schema?: Schema }> };
type Operation = { responses: Record<string, Response>; security?: unknown[]; parameters?: Parameter[] };
export type Parameter = { in: string; name: string; required?: boolean; description?: string; schema?: Schema };
export type OpenApiDocument = {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, Schema>; headers?: Record<string, Header> };
};

/** What came back, as app.inject() reports it. */
export type Answer = { statusCode: number; headers: Record<string, unknown>; body: string };

const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];
/**
 * Headers of the message itself, which no OpenAPI response declares (Content-Type is the
 * media type; OpenAPI ignores a Content-Type response header). Every other header sent
 * must be declared on the response it came with.
 */
const MESSAGE_HEADERS = new Set(["content-type", "content-length", "date", "connection", "keep-alive", "transfer-encoding"]);
/** Keywords of OpenAPI's Schema Object that JSON Schema does not define. */
const OPENAPI_KEYWORDS = ["example", "xml", "externalDocs", "discriminator"];
// ajv-formats is CommonJS; under NodeNext its default import is the module object's type.
const addFormats = addFormatsPlugin as unknown as (ajv: Ajv2020) => Ajv2020;

type Route = { key: string; method: string; template: string; pattern: RegExp; params: number; operation: Operation };

export type Contract = {
  /** "GET /v1/wallets/{walletId}" for every operation of the document. */
  operations: string[];
  /**
   * The same check of the value a handler returned, before the serializer shaped it: the
   * serializer turns a null integer into 0, a null string into "" and 1.5 into 1, so the
   * wire alone can look right while the data is not.
   */
  checkPayload: (method: string, routeUrl: string, status: number, contentType: string | undefined, payload: unknown) => string[];
  /** Everything wrong with one answer, each naming the operation and status; [] when it conforms. */
  check: (method: string, url: string, answer: Answer) => string[];
  /** The statuses the operation documents. */
  statusesOf: (key: string) => string[];
  /** An operation that needs no bearer token (its security is [], or names schemes other than the bearer). */
  isPublic: (key: string) => boolean;
  /** The headers a response declares, references into components.headers resolved, by lower-case name. */
  headersOf: (key: string, status: string) => Record<string, Header>;
  /** The operation's parameters as the document declares them. */
  parametersOf: (key: string) => Parameter[];
  /** The statuses each operation was seen to answer with. */
  seen: Map<string, Set<number>>;
};

export function createContract(document: OpenApiDocument): Contract {
  const ajv = new Ajv2020({ strict: true, allErrors: true, allowUnionTypes: true });
  addFormats(ajv);
  ajv.addVocabulary(OPENAPI_KEYWORDS);
  const defs = Object.fromEntries(
    Object.entries(document.components?.schemas ?? {}).map(([name, schema]) => [name, closeObjects(toDefs(schema))]),
  );
  const routes: Route[] = Object.entries(document.paths).flatMap(([template, byMethod]) =>
    Object.entries(byMethod)
      .filter(([method]) => METHODS.includes(method))
      .map(([method, operation]) => ({
        key: `${method.toUpperCase()} ${template}`,
        method: method.toUpperCase(),
        template,
        pattern: new RegExp(`^${template.split(/\{[^}]+\}/).map(escapeRegExp).join("[^/]+")}$`),
        params: (template.match(/\{/g) ?? []).length,
        operation,
      })),
  );
  const validators = new Map<string, ValidateFunction>();
  const seen = new Map<string, Set<number>>();

  const resolveHeader = (header: Header | { $ref: string }): Header => {
    if (!("$ref" in header)) return header;
    const name = header.$ref.replace(/^#\/components\/headers\//, "");
    const resolved = document.components?.headers?.[name];
    if (!resolved) throw new Error(`${header.$ref} is not in components.headers`);
    return resolved;
  };
  const declaredHeaders = (response: Response | undefined): Record<string, Header> =>
    Object.fromEntries(Object.entries(response?.headers ?? {}).map(([name, header]) => [name.toLowerCase(), resolveHeader(header)]));

  const routeOf = (method: string, url: string): Route | undefined => {
    const path = url.split("?", 1)[0]!.replace(/\/$/, "");
    // A literal segment wins over a parameter, as in the router.
    return routes
      .filter((route) => route.method === method.toUpperCase() && route.pattern.test(path))
      .sort((a, b) => a.params - b.params)[0];
  };

  const validatorFor = (id: string, schema: Schema): ValidateFunction => {
    let validate = validators.get(id);
    if (!validate) {
      validate = ajv.compile({ ...closeObjects(toDefs(schema)), $defs: defs });
      validators.set(id, validate);
    }
    return validate;
  };

  /** A header's value against its schema, read as OpenAPI's simple style reads it: a number when the schema says so. */
  const checkHeaderValue = (id: string, schema: Schema, value: unknown, where: string): string[] => {
    const text = String(value);
    const numeric = schema.type === "integer" || schema.type === "number";
    const read: unknown = numeric && /^-?\d+(\.\d+)?$/.test(text) ? Number(text) : text;
    const validate = validatorFor(id, schema);
    if (validate(read)) return [];
    const errors = (validate.errors ?? []).map((e) => `${e.message ?? ""}${describeParams(e.params)}`);
    return [`${where} ${JSON.stringify(text)} does not match the documented schema: ${errors.join("; ")}`];
  };

  const validateBody = (id: string, schema: Schema, body: unknown, where: string, sent: string): string[] => {
    const validate = validatorFor(id, schema);
    if (validate(body)) return [];
    const errors = (validate.errors ?? []).map((e) => `${e.instancePath || "(body)"} ${e.message ?? ""}${describeParams(e.params)}`);
    return [`${where}: body does not match the documented schema: ${errors.join("; ")}; body ${sent.slice(0, 500)}`];
  };

  return {
    operations: routes.map((route) => route.key),
    statusesOf: (key) => Object.keys(routes.find((route) => route.key === key)?.operation.responses ?? {}),
    isPublic: (key) => {
      const security = routes.find((route) => route.key === key)?.operation.security;
      return security !== undefined && !security.some((requirement) => typeof requirement === "object" && requirement !== null && "bearer" in requirement);
    },
    headersOf: (key, status) => declaredHeaders(routes.find((route) => route.key === key)?.operation.responses[status]),
    parametersOf: (key) => routes.find((route) => route.key === key)?.operation.parameters ?? [],
    seen,
    checkPayload: (method, routeUrl, status, contentType, payload) => {
      const key = `${method.toUpperCase()} ${routeUrl.replace(/:(\w+)/g, "{$1}")}`;
      const route = routes.find((candidate) => candidate.key === key);
      const mediaType = (contentType ?? "application/json").split(";", 1)[0]!.trim().toLowerCase();
      const schema = route?.operation.responses[String(status)]?.content?.[mediaType]?.schema;
      // An operation, status or media type the document lacks is reported from the answer itself.
      if (!schema) return [];
      // What JSON can carry of the value (a Date becomes its ISO string, as the serializer makes it).
      const text = JSON.stringify(payload) ?? "";
      const value: unknown = JSON.parse(text === "" ? "null" : text);
      return validateBody(`${key} ${status} ${mediaType}`, schema, value, `${key} → ${status} (the handler's value, before serialization)`, text);
    },
    check: (method, url, answer) => {
      const route = routeOf(method, url);
      if (!route) return [`${method.toUpperCase()} ${url}: the document has no operation for it`];
      const status = answer.statusCode;
      if (!seen.has(route.key)) seen.set(route.key, new Set());
      seen.get(route.key)!.add(status);
      const where = `${route.key} → ${status}`;
      const responses = route.operation.responses;
      const statusKey = [String(status), `${String(status)[0]}XX`, "default"].find((key) => responses[key]);
      if (!statusKey) return [`${where}: status not documented (documented: ${Object.keys(responses).join(", ")}); body ${answer.body}`];
      const response = responses[statusKey]!;
      const problems: string[] = [];
      const declared = declaredHeaders(response);
      for (const [name, header] of Object.entries(declared)) {
        if (header.required && answer.headers[name] === undefined) problems.push(`${where}: required header ${name} missing`);
      }
      // A header a route sends without declaring it (X-Request-Id, RateLimit-*, Retry-After, …)
      // is one a generated client does not know: a new route cannot forget them unnoticed.
      for (const [name, value] of Object.entries(answer.headers)) {
        if (MESSAGE_HEADERS.has(name.toLowerCase())) continue;
        const header = declared[name.toLowerCase()];
        if (!header) {
          problems.push(`${where}: header ${name} sent (${String(value)}) but not declared (declared: ${Object.keys(declared).join(", ") || "none"})`);
          continue;
        }
        if (header.schema) problems.push(...checkHeaderValue(`${route.key} ${statusKey} header ${name}`, header.schema, value, `${where}: header ${name}`));
      }
      const content = response.content ?? {};
      const contentType = answer.headers["content-type"];
      if (Object.keys(content).length === 0) {
        if (answer.body !== "") problems.push(`${where}: documented without a body, sent ${contentType} ${answer.body}`);
        return problems;
      }
      const mediaType = typeof contentType === "string" ? contentType.split(";", 1)[0]!.trim().toLowerCase() : undefined;
      const media = mediaType === undefined ? undefined : content[mediaType];
      if (!media) {
        problems.push(`${where}: Content-Type ${String(contentType)} is not the documented ${Object.keys(content).join(" or ")}`);
        return problems;
      }
      if (!media.schema) return problems;
      let body: unknown;
      try {
        body = JSON.parse(answer.body);
      } catch {
        problems.push(`${where}: body is not JSON: ${answer.body.slice(0, 200)}`);
        return problems;
      }
      problems.push(...validateBody(`${route.key} ${statusKey} ${mediaType}`, media.schema, body, where, answer.body));
      return problems;
    },
  };
}

/** OpenAPI's "#/components/schemas/X" refs, as refs into the $defs that each validator carries. */
function toDefs(schema: unknown): Schema {
  return JSON.parse(JSON.stringify(schema).replaceAll('"#/components/schemas/', '"#/$defs/')) as Schema;
}

/** additionalProperties: false on every object schema that names its properties and says nothing else. */
function closeObjects(schema: unknown): Schema {
  if (Array.isArray(schema)) return schema.map(closeObjects) as unknown as Schema;
  if (schema === null || typeof schema !== "object") return schema as Schema;
  const copy: Schema = Object.fromEntries(
    Object.entries(schema).map(([key, value]) => [key, key === "enum" || key === "const" || key === "default" || key === "example" ? value : closeObjects(value)]),
  );
  if (copy.properties && copy.additionalProperties === undefined && copy.allOf === undefined) copy.additionalProperties = false;
  return copy;
}

const describeParams = (params: Record<string, unknown>): string =>
  Object.keys(params).length > 0 ? ` ${JSON.stringify(params)}` : "";

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * The /v1 routes the app serves, as "METHOD /v1/path/{param}", from Fastify's printRoutes
 * tree. HEAD is left out: Fastify adds it to every GET route by itself, and a HEAD answers
 * as its GET does, without a body.
 */
export function registeredApiRoutes(printedTree: string): string[] {
  const found: string[] = [];
  const stack: string[] = [];
  for (const line of printedTree.split("\n")) {
    const match = /^([│ ]*)[├└]── (\S+)(?: \(([A-Z, ]+)\))?/.exec(line.replace(/\u00a0/g, " "));
    if (!match) continue;
    const depth = match[1]!.length / 4;
    stack.length = depth;
    stack.push(match[2]!);
    const path = stack.join("").replace(/:(\w+)/g, "{$1}");
    if (!/^\/v1(\/|$)/.test(path) || !match[3]) continue;
    for (const method of match[3].split(", ")) if (method !== "HEAD") found.push(`${method} ${path}`);
  }
  return found.sort();
}
