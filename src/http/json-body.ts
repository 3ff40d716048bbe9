// How a JSON request body becomes a value. Fastify's own parser decodes whatever bytes
// arrive as UTF-8: bytes that are not UTF-8 (a Latin-1 "é", a body sent in another charset)
// become U+FFFD, and so does an escaped lone surrogate ("\ud800") once PostgreSQL stores it.
// Such a request was accepted and answered 201, but its text was not what was sent. Here it
// is refused instead (RFC 8259: JSON exchanged between systems is UTF-8), before any
// handler sees it; the parsing itself stays Fastify's (proto and constructor keys refused).
// So is a key given twice in one object, which JSON.parse resolves to its last value without a
// word (repeated-keys.ts), and, before it is parsed, a body nesting arrays and objects deeper
// than any request does, or holding more of them than its route can use, which costs the event
// loop far more to parse than its size says (json-text-scan.ts, json-container-bound.ts).
import { isUtf8 } from "node:buffer";
import type { Readable } from "node:stream";
import { errorCodes, type FastifyInstance, type FastifyRequest } from "fastify";
import { GIVEN_TWICE, shortened } from "./error-handler.ts";
import { containerBound } from "./json-container-bound.ts";
import { MAX_JSON_DEPTH, scanJsonText } from "./json-text-scan.ts";
import { ProblemError, invalid } from "./problem.ts";
import { repeatedKeyPath } from "./repeated-keys.ts";

type ParseText = (request: FastifyRequest, text: string, done: (error: Error | null, value?: unknown) => void) => void;

export function registerJsonBodyParser(app: FastifyInstance): void {
  const parseText = app.getDefaultJsonParser("error", "error") as ParseText;
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser("application/json", { parseAs: "buffer" }, (request, body, done) => {
    const bytes = body as Buffer;
    const refusal =
      refuseEncoding(request.headers["content-encoding"]) ??
      refuseCharset(request.headers["content-type"]) ??
      (isUtf8(bytes) ? undefined : NOT_UTF8());
    if (refusal) return done(refusal, undefined);
    // A route that takes no body (a DELETE, a test or a secret rotation) is often called by a
    // client that sends Content-Type: application/json on every request: nothing to parse.
    if (bytes.length === 0 && request.routeOptions.schema?.body === undefined) return done(null, undefined);
    const text = bytes.toString("utf8");
    // Not on a route called by a tool rather than a client of ours (the Helius webhook, which
    // answers for each item and would lose the whole delivery to a 400): it refuses the items
    // that give a key twice itself (routes/helius-repeated-keys.ts), and keeps a refused item
    // nested too deep to store as a note (helius-rejected-items.ts). Nobody but Helius gets a
    // body of it parsed: the secret is checked before the body is read.
    const { schema, bodyLimit, config } = request.routeOptions;
    let keys: number | undefined;
    if (!config?.public) {
      const maxContainers = containerBound(schema?.body, bodyLimit);
      const scan = scanJsonText(text, { maxDepth: MAX_JSON_DEPTH, maxContainers });
      if (scan.exceeds !== null) return done(scan.exceeds === "depth" ? TOO_DEEP() : TOO_MANY(maxContainers), undefined);
      keys = scan.keys;
    }
    // Fastify's parser answers at once, from inside its own try block: its answer is taken out
    // of it, so that nothing thrown after parsing could be mistaken for bad JSON.
    let parsed: { error: Error | null; value?: unknown } = { error: null };
    parseText(request, text, (error, value) => (parsed = { error, value }));
    if (parsed.error) return done(isJson(text) ? PROTOTYPE_KEY() : parsed.error, undefined);
    // Only an escape can make a lone surrogate: valid UTF-8 cannot carry one.
    const where = SURROGATE_ESCAPE.test(text) ? loneSurrogatePath(parsed.value) : undefined;
    if (where !== undefined) return done(invalid(where, LONE_SURROGATE), undefined);
    const repeated = keys === undefined ? undefined : repeatedKeyPath(text, parsed.value, keys);
    if (repeated !== undefined) return done(invalid(shortened(["body", ...repeated].join(".")), GIVEN_TWICE), undefined);
    done(null, parsed.value);
  });
  app.addContentTypeParser("*", refuseUnlessEmpty);
}

/**
 * Any media type but JSON: 415, as Fastify answers one it has no parser for, except an empty
 * body on a route that takes none. `curl -X DELETE … -d ''` sends an empty form body: refused,
 * the wallet was not deleted (and a wallet that did not exist was a 415, not a 404), though
 * such a route refuses only a body with fields (no-body.ts). An unknown route is left to its 404.
 */
function refuseUnlessEmpty(request: FastifyRequest, payload: Readable, done: (error: Error | null, value?: unknown) => void): void {
  const length = request.headers["content-length"];
  if (request.is404) return done(null, undefined);
  if (request.routeOptions.schema?.body !== undefined || (length !== undefined && length !== "0")) {
    return done(new errorCodes.FST_ERR_CTP_INVALID_MEDIA_TYPE(), undefined);
  }
  if (length === "0") return done(null, undefined);
  // Chunked: empty when it ends before its first byte.
  let answered = false;
  const answer = (error: Error | null) => {
    if (answered) return;
    answered = true;
    done(error, undefined);
  };
  payload.once("data", () => answer(new errorCodes.FST_ERR_CTP_INVALID_MEDIA_TYPE()));
  payload.once("end", () => answer(null));
  payload.once("error", (error) => answer(error));
}

/**
 * Fastify refuses a `__proto__` or `constructor.prototype` key with the words it uses for bad
 * JSON; the body is JSON, refused so that no key of it can reach an object's prototype.
 */
const PROTOTYPE_KEY = () =>
  invalid("body", "has a __proto__ or constructor.prototype key, which is refused for safety (it could change an object's prototype)");

/** Whether `text` is JSON by the language's own parser (asked only of a body Fastify refused). */
function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

const TOO_DEEP = () =>
  new ProblemError("validation_failed", `the body nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep, far deeper than any request of this API`);
const TOO_MANY = (bound: number) =>
  new ProblemError("validation_failed", `the body holds more than ${bound} arrays and objects, far more than any request of this route`);
const NOT_UTF8 = () => new ProblemError("validation_failed", "the body is not valid UTF-8; send JSON as UTF-8");
const LONE_SURROGATE = "contains a lone UTF-16 surrogate escape (such as \\ud800), which is not a character and cannot be stored";
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;
const LONE_SURROGATE_CHAR = /\p{Cs}/u;

/**
 * Bodies are read as sent, never decompressed: a gzip body would otherwise be "not valid
 * JSON" (it is, compressed), and a plain one labelled br would pass as if unlabelled.
 */
function refuseEncoding(contentEncoding: string | undefined): ProblemError | undefined {
  const encoding = contentEncoding?.trim().toLowerCase();
  if (encoding === undefined || encoding === "" || encoding === "identity") return undefined;
  return new ProblemError("unsupported_media_type", `Content-Encoding ${encoding} is not accepted; send the JSON uncompressed`);
}

/** A charset other than UTF-8 would be decoded wrongly: 415, saying which one to send. */
function refuseCharset(contentType: string | undefined): ProblemError | undefined {
  const charset = /;\s*charset\s*=\s*"?([^";\s]*)/i.exec(contentType ?? "")?.[1]?.toLowerCase();
  if (charset === undefined || charset === "utf-8" || charset === "utf8") return undefined;
  return new ProblemError("unsupported_media_type", `charset ${charset} is not accepted; send application/json as UTF-8`);
}

/**
 * The path of a string (or key) holding a lone surrogate, or undefined. A walk with its own
 * stack: JSON nested 100,000 deep is valid, and recursion would overflow the call stack.
 */
function loneSurrogatePath(body: unknown): string | undefined {
  const pending: [unknown, string][] = [[body, "body"]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [value, path] = next;
    if (typeof value === "string") {
      if (LONE_SURROGATE_CHAR.test(value)) return path;
    } else if (value !== null && typeof value === "object") {
      for (const [key, item] of Object.entries(value)) {
        if (LONE_SURROGATE_CHAR.test(key)) return `${path}.${key}`;
        pending.push([item, `${path}.${key}`]);
      }
    }
  }
  return undefined;
}
