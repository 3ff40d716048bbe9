// No input makes a 500, by property. Every /v1 route the OpenAPI document lists gets a fixed,
// seeded stream of generated requests (fast-check): bodies that are random JSON, the route's
// own fields with hostile values, or a valid body with one field broken; query strings with
// repeated keys, empty values, huge and negative numbers, non-ASCII and bad escapes; path ids
// that are real, another caller's, random, very long or percent-encoded junk; and several
// content types. Whatever comes, the answer is not a 5xx, and a 4xx is problem+json.
// On a failure fast-check prints the seed, the path and the shrunk request: pass them as
// `{ seed, path }` to fc.assert to replay it.
import fc from "fast-check";
import { afterAll, beforeAll, describe, it } from "vitest";
import { base58Encode } from "../../src/domain/base58.ts";
import { HELIUS_AUTH_SCHEME } from "../../src/http/app.ts";
import { insertEvent } from "../helpers/alert-fixtures.ts";
import { startTestApp } from "../helpers/app.ts";
import { hostileNumber, hostileString, pct, percentJunk, wildValue } from "../helpers/fuzz-hostile.ts";

/** The seed of every run (each route's own is derived from it and the route). */
const SEED = 20_240_917;
const RUNS_PER_ROUTE = 200;
const HELIUS_SECRET = "helius-fuzz-secret-0123456789";

// The limits this file would otherwise run into: thousands of requests from one caller in a
// few seconds, a test notification on many of the POST …/test runs, and some 200 alerts on
// the caller's one wallet (every generated create that is valid, three more after each delete).
const t = await startTestApp("api-fuzz", {
  RATE_LIMIT_PER_MINUTE: "10000000",
  TEST_NOTIFICATIONS_PER_HOUR: "1000000",
  MAX_ALERTS_PER_WALLET: "1000000",
  HELIUS_AUTH_HEADER: HELIUS_SECRET,
});
afterAll(async () => {
  await t.close();
});

// ---------------------------------------------------------------------------------------
// The routes, as the OpenAPI document describes them.

type Schema = {
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  enum?: unknown[];
  anyOf?: Schema[];
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
  uniqueItems?: boolean;
  description?: string;
};
type Parameter = { in: string; name: string; required?: boolean; schema: Schema };
type Operation = { parameters?: Parameter[]; requestBody?: { content: Record<string, { schema: Schema }> }; security?: unknown[] };
type Route = {
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  path: string;
  pathParams: Parameter[];
  queryParams: Parameter[];
  body: Schema | undefined;
  /** Authenticated by the Helius shared secret, not a JWT (its security names the webhook's scheme). */
  helius: boolean;
};

const documentResponse = await t.app.inject({ method: "GET", url: "/v1/openapi.json" });
if (documentResponse.statusCode !== 200) throw new Error(`GET /v1/openapi.json answered ${documentResponse.statusCode}`);
const openapi = documentResponse.json() as { paths: Record<string, Record<string, Operation>> };

const ROUTES: Route[] = Object.entries(openapi.paths)
  .filter(([path]) => path.startsWith("/v1/"))
  .flatMap(([path, operations]) =>
    Object.entries(operations)
      .filter(([method]) => ["get", "post", "put", "patch", "delete"].includes(method))
      .map(([method, operation]) => ({
        method: method.toUpperCase() as Route["method"],
        path,
        pathParams: (operation.parameters ?? []).filter((p) => p.in === "path"),
        queryParams: (operation.parameters ?? []).filter((p) => p.in === "query"),
        body: operation.requestBody?.content["application/json"]?.schema,
        helius: operation.security?.some((requirement) => typeof requirement === "object" && requirement !== null && HELIUS_AUTH_SCHEME in requirement) === true,
      })),
  );
// Writes first, then reads (of what the writes stored), then deletes.
const METHOD_ORDER: Record<Route["method"], number> = { POST: 0, PUT: 0, PATCH: 0, GET: 1, DELETE: 2 };
ROUTES.sort((a, b) => METHOD_ORDER[a.method] - METHOD_ORDER[b.method]);
if (ROUTES.length < 19) throw new Error(`the OpenAPI document lists only ${ROUTES.length} /v1 operations`);
// Else the webhook would be fuzzed with a bearer token only, every request a 401 before its body is read.
if (!ROUTES.some((route) => route.helius)) throw new Error(`no operation of the OpenAPI document names the ${HELIUS_AUTH_SCHEME} scheme`);

// ---------------------------------------------------------------------------------------
// Two callers, each with a wallet, an alert of every notification method, an event and a
// notification. Generated requests name these by reference (owner and kind), resolved when
// the request is sent: a DELETE that succeeded is followed by a fresh set.

type Owner = "own" | "other";
type IdKind = "wallet" | "alert:email" | "alert:sms" | "alert:webhook" | "notification" | "address";
type Fixture = Record<IdKind, string>;
const CALLERS: Record<Owner, string> = { own: "fuzz-owner", other: "fuzz-other" };
const fixtures = {} as Record<Owner, Fixture>;
const tokens = {} as Record<Owner | "noScopes", string>;

/** A real id, named by owner and kind and read when the request is sent. */
class IdRef {
  constructor(
    readonly owner: Owner,
    readonly kind: IdKind,
  ) {}
  toJSON(): string {
    return fixtures[this.owner][this.kind];
  }
  toString(): string {
    return `ref(${this.owner} ${this.kind})`;
  }
  [fc.toStringMethod](): string {
    return this.toString();
  }
}

async function api(owner: Owner, method: "GET" | "POST", url: string, payload?: unknown) {
  return t.app.inject({ method, url, headers: { authorization: `Bearer ${tokens[owner]}` }, ...(payload ? { payload } : {}) });
}

/** POSTs and returns the new resource's id, read from its Location. */
async function created(owner: Owner, url: string, payload: unknown): Promise<string> {
  const res = await api(owner, "POST", url, payload);
  if (res.statusCode !== 201) throw new Error(`seeding: POST ${url} answered ${res.statusCode}: ${res.body}`);
  return String(res.headers.location).split("/").pop()!;
}

/** Fixed chain values, so that every run stores the same data. */
const fixedBytes = (length: number, seed: number) =>
  base58Encode(Uint8Array.from({ length }, (_, i) => (seed * 31 + i * 17 + 1) % 256));
/** A caller's wallet keeps its address when it is tracked anew, so data ingested for it stays its own. */
const WALLET_ADDRESSES: Record<Owner, string> = { own: fixedBytes(32, 101), other: fixedBytes(32, 102) };

/** Gives the caller a wallet (the same address each time), an alert of each method, an event and a notification. */
async function seed(owner: Owner): Promise<void> {
  const address = WALLET_ADDRESSES[owner];
  const previous = fixtures[owner]?.wallet;
  const wallet =
    previous && (await api(owner, "GET", `/v1/wallets/${previous}`)).statusCode === 200
      ? previous
      : await created(owner, "/v1/wallets", { address, alias: `fuzz ${owner}`, tags: ["fuzz"] });
  const alert = (body: Record<string, unknown>) => created(owner, "/v1/risk/alerts", { walletId: wallet, ...body });
  const email = await alert({ condition: "large_transfer", threshold: 1000, notificationMethod: "email", recipient: "alice@example.com" });
  const sms = await alert({ condition: "unusual_activity", notificationMethod: "sms", recipient: "+14155550100" });
  const webhook = await alert({ condition: "suspicious_counterparty", notificationMethod: "webhook", webhookUrl: WEBHOOK_URLS[0] });
  const { notificationId } = await insertEvent(t, email, { createdAt: new Date(), notify: true });
  fixtures[owner] = { wallet, "alert:email": email, "alert:sms": sms, "alert:webhook": webhook, notification: notificationId!, address };
}

beforeAll(async () => {
  tokens.own = await t.token(CALLERS.own, undefined, { email: "owner@example.com", phone: "+14155550123" });
  tokens.other = await t.token(CALLERS.other, undefined, { email: "other@example.com" });
  tokens.noScopes = await t.token(CALLERS.own, "");
  await seed("own");
  await seed("other");
});

// ---------------------------------------------------------------------------------------
// Values that pass a schema (so that requests reach past validation), from the document.

// Drawn from a small pool half the time (the tracked wallets' addresses among them), so that a
// batch repeats an address, a mint or a signature, and transactions touch tracked wallets.
const address = fc.oneof(
  fc.uint8Array({ minLength: 32, maxLength: 32 }).map((bytes): string | IdRef => base58Encode(bytes)),
  fc.constantFrom<string | IdRef>(fixedBytes(32, 1), fixedBytes(32, 2), new IdRef("own", "address"), new IdRef("other", "address")),
);
const signature = fc.oneof(
  fc.uint8Array({ minLength: 64, maxLength: 64 }).map((bytes) => base58Encode(bytes)),
  fc.constantFrom(fixedBytes(64, 1), fixedBytes(64, 2)),
);
// Literal addresses and *.localhost only: a host name would make DNS part of the outcome.
const WEBHOOK_URLS = [
  "http://127.0.0.1:9/hook", "https://hooks.localhost/x", "https://8.8.8.8/hook", "https://10.0.0.1/", "http://[::1]:9/",
  "https://0x7f000001/", "ftp://127.0.0.1/", "https://user:pw@127.0.0.1/", "not a url",
];
const RECIPIENTS = ["alice@example.com", "bob@localhost", "+14155550100", "+1", "alice@", "@example.com"];

function idKindOf(name: string): IdKind | undefined {
  if (name === "walletId") return "wallet";
  if (name === "alertId") return "alert:email";
  if (name === "notificationId") return "notification";
  return undefined;
}

const ALERT_KINDS: IdKind[] = ["alert:email", "alert:sms", "alert:webhook"];
/** The caller's own id of the kind a parameter names. */
const ownRef = (kind: IdKind) => (kind.startsWith("alert") ? fc.constantFrom(...ALERT_KINDS) : fc.constant(kind)).map((k) => new IdRef("own", k));
/** Any real id: the caller's or the other caller's, of the right kind or not. */
const anyRef = fc
  .tuple(fc.constantFrom<Owner>("own", "other"), fc.constantFrom<IdKind>("wallet", ...ALERT_KINDS, "notification", "address"))
  .map(([owner, kind]) => new IdRef(owner, kind));

function validFor(schema: Schema, name = "", depth = 0): fc.Arbitrary<unknown> {
  const kind = idKindOf(name);
  if (kind) return fc.oneof({ weight: 4, arbitrary: ownRef(kind) }, { weight: 1, arbitrary: anyRef });
  if (name === "webhookUrl") return fc.constantFrom(...WEBHOOK_URLS);
  if (name === "recipient") return fc.constantFrom(...RECIPIENTS);
  if (schema.enum) return fc.constantFrom(...schema.enum);
  if (schema.anyOf) return fc.oneof(...schema.anyOf.map((branch) => validFor(branch, name, depth)));
  const types = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : [];
  if (types.length > 1) return fc.oneof(...types.map((type) => validFor({ ...schema, type }, name, depth)));
  switch (types[0]) {
    case "object": {
      const properties = schema.properties ?? {};
      const model = Object.fromEntries(Object.entries(properties).map(([key, sub]) => [key, validFor(sub, key, depth + 1)]));
      return fc.record(model, { requiredKeys: schema.required ?? [] });
    }
    case "array": {
      const items = validFor(schema.items ?? {}, name, depth + 1);
      const constraints = { minLength: schema.minItems ?? 0, maxLength: Math.min(schema.maxItems ?? 3, depth === 0 ? 3 : 2) };
      return schema.uniqueItems ? fc.uniqueArray(items, constraints) : fc.array(items, constraints);
    }
    case "string":
      if (schema.pattern?.includes("{32,44}")) return schema.pattern.endsWith("?$") ? fc.oneof(address, fc.constant("")) : address;
      if (schema.pattern?.includes("{64,88}")) return signature;
      if (schema.pattern) {
        // A query integer: mostly within the range its description gives, sometimes any that matches.
        const range = /from (\d+) to (\d+)/.exec(schema.description ?? "");
        const matching = fc.stringMatching(new RegExp(schema.pattern));
        if (!range) return matching;
        const [min, max] = [Number(range[1]), Number(range[2])];
        return fc.oneof(
          { weight: 4, arbitrary: fc.integer({ min, max }).map(String) },
          { weight: 1, arbitrary: fc.constantFrom(min - 1, min, max, max + 1).map(String) },
          { weight: 1, arbitrary: matching },
        );
      }
      return fc.string({ unit: "grapheme", minLength: schema.minLength ?? 0, maxLength: Math.min(schema.maxLength ?? 40, 40) });
    case "integer":
    case "number": {
      // Within the range, and often at its ends, where numbers stop fitting a column.
      const [min, max] = [schema.minimum ?? 0, schema.maximum ?? 1e9];
      const ends = fc.constantFrom(min, max, ...(max > Number.MAX_SAFE_INTEGER ? [Number.MAX_SAFE_INTEGER, 2 ** 63] : []));
      const inside = fc.integer({ min: Math.max(min, Number.MIN_SAFE_INTEGER), max: Math.min(max, Number.MAX_SAFE_INTEGER) });
      if (types[0] === "integer") return fc.oneof({ weight: 3, arbitrary: inside }, { weight: 1, arbitrary: ends });
      return fc.oneof(
        { weight: 2, arbitrary: inside },
        { weight: 2, arbitrary: fc.double({ min, max, noNaN: true, noDefaultInfinity: true }) },
        { weight: 1, arbitrary: ends },
      );
    }
    case "boolean":
      return fc.boolean();
    case "null":
      return fc.constant(null);
    default:
      return fc.oneof(fc.constant(null), fc.jsonValue({ maxDepth: 1 }));
  }
}

// Bodies valid by the rules the schema cannot state (threshold range per condition, the
// destination per notification method), so that generated alerts get created and changed.
const CONDITION_THRESHOLDS: Record<string, { min: number; max: number; required: boolean }> = {
  large_transfer: { min: 0.000000001, max: 1e18, required: true },
  suspicious_counterparty: { min: 0, max: 100, required: false },
  unusual_activity: { min: 0.000000001, max: 1_000_000, required: false },
  risk_score_increase: { min: 1, max: 100, required: false },
};
const unit = fc.double({ min: 0, max: 1, noNaN: true });
const createAlertBody = fc
  .record({
    walletId: fc.oneof({ weight: 6, arbitrary: ownRef("wallet") }, { weight: 1, arbitrary: anyRef }),
    condition: fc.constantFrom(...Object.keys(CONDITION_THRESHOLDS)),
    notificationMethod: fc.constantFrom("email", "sms", "webhook"),
    threshold: fc.option(unit),
    cooldownSeconds: fc.option(fc.integer({ min: 0, max: 604_800 })),
    token: fc.option(fc.constantFrom("SOL", "USDC", "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v")),
    destination: fc.option(fc.nat()),
  })
  .map(({ walletId, condition, notificationMethod, threshold, cooldownSeconds, token, destination }) => {
    const rule = CONDITION_THRESHOLDS[condition]!;
    const body: Record<string, unknown> = { walletId, condition, notificationMethod };
    if (threshold !== null || rule.required) body.threshold = rule.min + (threshold ?? 0.5) * (rule.max - rule.min);
    if (cooldownSeconds !== null) body.cooldownSeconds = cooldownSeconds;
    if (token !== null && condition === "large_transfer") body.token = token;
    if (notificationMethod === "webhook") body.webhookUrl = WEBHOOK_URLS[(destination ?? 0) % 3];
    else if (destination !== null) body.recipient = notificationMethod === "email" ? "alice@example.com" : "+14155550100";
    return body;
  });
const updateAlertBody = fc
  .record(
    {
      status: fc.constantFrom("active", "paused"),
      // 1–100 is a valid threshold for every condition.
      threshold: fc.double({ min: 1, max: 100, noNaN: true }),
      cooldownSeconds: fc.integer({ min: 0, max: 604_800 }),
    },
    { requiredKeys: [] },
  )
  .map((body) => (Object.keys(body).length > 0 ? body : { status: "active" }));
const VALID_BODIES: Record<string, fc.Arbitrary<unknown>> = {
  "POST /v1/risk/alerts": createAlertBody,
  "PATCH /v1/risk/alerts/{alertId}": updateAlertBody,
};

/** The schema's own fields (nested too), each with a hostile value. */
function hostileFields(schema: Schema, depth = 2): fc.Arbitrary<unknown> {
  const nested = (sub: Schema) =>
    depth > 0 ? fc.oneof({ weight: 3, arbitrary: wildValue }, { weight: 1, arbitrary: hostileFields(sub, depth - 1) }) : wildValue;
  if (schema.properties) {
    const model = Object.fromEntries(Object.entries(schema.properties).map(([key, sub]) => [key, nested(sub)]));
    return fc.record(model, { requiredKeys: [] });
  }
  if (schema.items) return fc.array(nested(schema.items), { maxLength: 3 });
  const branch = schema.anyOf?.find((b) => b.properties || b.items);
  return branch ? hostileFields(branch, depth) : wildValue;
}

/** One change to a valid body: a member replaced (often by a hostile value of its own type), removed, or one added. */
type Mutation = { kind: "replace" | "delete" | "add"; sameType: boolean; text: string; number: number; value: unknown; key: string };
const mutation: fc.Arbitrary<Mutation> = fc.record({
  kind: fc.constantFrom("replace", "replace", "replace", "replace", "delete", "add"),
  sameType: fc.boolean(),
  text: hostileString,
  number: hostileNumber,
  value: wildValue,
  key: fc.oneof(fc.constantFrom("__proto__", "constructor", "prototype", "toString", "id", "owner", ""), fc.string({ maxLength: 10 })),
});

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value) && !(value instanceof IdRef);

function clone(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(clone);
  if (isPlainObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, clone(v)]));
  return value;
}

/** The value with one place in it changed: the `pick`th container and member, depth first. */
function mutateOne(value: unknown, pick: number, change: Mutation): unknown {
  const root = { body: clone(value) } as Record<string, unknown>;
  const places: [Record<string, unknown> | unknown[], string | number][] = [];
  const visit = (container: Record<string, unknown> | unknown[], key: string | number) => {
    places.push([container, key]);
    const child = (container as Record<string, unknown>)[key];
    if (Array.isArray(child)) child.forEach((_, i) => visit(child, i));
    else if (isPlainObject(child)) for (const k of Object.keys(child)) visit(child, k);
  };
  visit(root, "body");
  const [container, key] = places[pick % places.length]!;
  const target = (container as Record<string, unknown>)[key];
  const replacement = !change.sameType
    ? change.value
    : typeof target === "string" || target instanceof IdRef
      ? change.text
      : typeof target === "number"
        ? change.number
        : change.value;
  // defineProperty: a key such as "__proto__" becomes a member, as JSON.parse would make it.
  if (change.kind === "add" && isPlainObject(target)) {
    Object.defineProperty(target, change.key, { value: change.value, enumerable: true, writable: true, configurable: true });
  } else if (change.kind === "add" && Array.isArray(target)) target.push(change.value);
  else if (change.kind === "delete" && key !== "body") {
    if (Array.isArray(container)) container.splice(key as number, 1);
    else delete container[key as string];
  } else {
    (container as Record<string, unknown>)[key] = change.kind === "delete" ? undefined : replacement;
  }
  return root.body;
}

// ---------------------------------------------------------------------------------------
// Requests.

type Payload = { kind: "none" } | { kind: "json"; value: unknown } | { kind: "raw"; text: string } | { kind: "bytes"; bytes: Buffer };

const RAW_BODIES = [
  "", " ", "{", "}", "{\"a\":", "[", "null", "[]", "{}", "1e400", "-", "\"\\ud800\"", "{\"a\":\"\\udc00x\"}",
  "{\"__proto__\":{\"admin\":true}}", "{\"constructor\":{\"prototype\":{\"x\":1}}}", "\ufeff{}", "{'a':1}", "{\"a\":1}{\"b\":2}",
  "{\"a\":1,}", "NaN", "Infinity", "undefined", "[".repeat(10_000) + "]".repeat(10_000), "{\"a\":".repeat(3_000) + "1" + "}".repeat(3_000),
  "\"" + "x".repeat(1_100_000) + "\"",
];

/** What a well-behaved client sends: a valid body, or none where the route takes none. */
const validPayload = (route: Route): fc.Arbitrary<Payload> =>
  route.body
    ? (VALID_BODIES[`${route.method} ${route.path}`] ?? validFor(route.body)).map((value): Payload => ({ kind: "json", value }))
    : fc.constant<Payload>({ kind: "none" });

const hostilePayload = (route: Route): fc.Arbitrary<Payload> => {
  const json = (value: fc.Arbitrary<unknown>) => value.map((v): Payload => ({ kind: "json", value: v }));
  const common = [
    { weight: 2, arbitrary: json(fc.jsonValue({ maxDepth: 4 })) },
    { weight: 1, arbitrary: fc.constantFrom(...RAW_BODIES).map((text): Payload => ({ kind: "raw", text })) },
    { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 60 }).map((text): Payload => ({ kind: "raw", text })) },
    // Not UTF-8: a Latin-1 "é" inside a JSON string, and random bytes.
    {
      weight: 1,
      arbitrary: fc
        .oneof(fc.constant(Buffer.from('{"alias":"caf\xe9"}', "latin1")), fc.uint8Array({ maxLength: 40 }).map((b) => Buffer.from(b)))
        .map((bytes): Payload => ({ kind: "bytes", bytes })),
    },
  ];
  if (!route.body) return fc.oneof({ weight: 2, arbitrary: json(fc.constant({})) }, ...common);
  const valid = VALID_BODIES[`${route.method} ${route.path}`] ?? validFor(route.body);
  return fc.oneof(
    { weight: 1, arbitrary: fc.constant<Payload>({ kind: "none" }) },
    ...common,
    { weight: 4, arbitrary: json(hostileFields(route.body)) },
    { weight: 12, arbitrary: json(fc.tuple(valid, fc.nat(), mutation).map(([value, pick, change]) => mutateOne(value, pick, change))) },
  );
};

const QUERY_VALUES = [
  "", "-1", "-0", "0", "00", "01", "1", "1.5", "1e3", "25", "100", "101", "500", "501", "100000", "100001", "1000000", "1000001",
  "999999999", "9999999999", "99999999999999999999", "9007199254740993", "253402300799", "253402300800", "2147483648", "-2147483649",
  "NaN", "Infinity", "null", "true", "undefined", "%201", "1%20", "%2B1", "0x10", "%D9%A3", "%EF%BC%91", "%F0%9F%90%8B", "%C3%A9", "%00", "[]", "{}",
];
const JUNK_KEYS = ["", "__proto__", "constructor", "toString", "page[]", "limit[]", "a[b]", "walletId[]", "%00", "%C3%A9", "%zz", "LIMIT", "x"];

const queryPair = (route: Route) => {
  const names = route.queryParams.map((p) => p.name);
  const key =
    names.length > 0
      ? fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...names) }, { weight: 1, arbitrary: fc.constantFrom(...JUNK_KEYS) })
      : fc.constantFrom(...JUNK_KEYS);
  const value = fc.oneof(
    fc.constantFrom(...QUERY_VALUES),
    fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }).map(String),
    fc.string({ unit: "grapheme", maxLength: 20 }).map(pct),
    fc.string({ unit: "grapheme", maxLength: 10 }),
    fc.integer({ min: 10, max: 3_000 }).map((n) => "9".repeat(n)),
    percentJunk,
    anyRef,
  );
  // key=value, a bare key, key=, =value
  return fc.tuple(key, value, fc.constantFrom("pair", "pair", "pair", "bare", "empty", "nokey"));
};

type QueryPart = [string, string | IdRef, string];

/** The route's own parameters with well-formed values (a required one nearly always, optional ones at times). */
const validQuery = (route: Route): fc.Arbitrary<QueryPart[]> =>
  fc
    .tuple(
      ...route.queryParams.map((param) =>
        fc.option(
          validFor(param.schema, param.name).map((v): QueryPart => [param.name, v instanceof IdRef ? v : String(v), "pair"]),
          { freq: param.required ? 20 : 2 },
        ),
      ),
    )
    .map((parts) => parts.filter((part): part is QueryPart => part !== null));

/** The same, with junk pairs on top: unknown and repeated keys, empty and hostile values. */
const hostileQuery = (route: Route): fc.Arbitrary<QueryPart[]> =>
  fc
    .tuple(validQuery(route), fc.array(queryPair(route), { minLength: 1, maxLength: 5 }))
    .map(([own, junk]) => [...own, ...(junk as QueryPart[])]);

const validSegment = (param: Parameter) => ownRef(idKindOf(param.name) ?? "wallet");
const hostileSegment = () =>
  fc.oneof(
    { weight: 3, arbitrary: anyRef },
    { weight: 2, arbitrary: fc.string({ unit: "grapheme", maxLength: 40 }).map(pct) },
    { weight: 1, arbitrary: fc.string({ unit: "grapheme", maxLength: 20 }) },
    { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 20 }).map(pct) },
    {
      weight: 1,
      arbitrary: fc.tuple(fc.constantFrom("", "wal_", "alr_", "ntf_"), fc.integer({ min: 40, max: 12_000 })).map(([prefix, n]) => prefix + "0".repeat(n)),
    },
    { weight: 2, arbitrary: percentJunk },
    {
      weight: 1,
      arbitrary: fc.tuple(fc.constantFrom("wal_", "alr_", "ntf_", "evt_"), fc.stringMatching(/^[0-9A-Za-z]{0,30}$/)).map(([prefix, rest]) => prefix + rest),
    },
  );

const hostileContentType = fc.constantFrom(
  "(none)", "text/plain", "application/json; charset=latin1", "application/json; charset=utf-8", "APPLICATION/JSON",
  "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/json;;", "application/problem+json", "*/*",
);

type Auth = "own" | "other" | "noScopes" | "none" | "garbage" | "helius" | "wrongSecret";
const hostileAuth = (route: Route): fc.Arbitrary<Auth> =>
  route.helius ? fc.constantFrom<Auth>("none", "wrongSecret", "own") : fc.constantFrom<Auth>("other", "noScopes", "none", "garbage");

type Dimension = "path" | "query" | "contentType" | "body" | "auth";

/**
 * Each request is well formed but for the dimensions drawn hostile: mostly one at a time, so
 * that an earlier check (the content type, the query) does not hide what a later one (the
 * body, the database) would do; sometimes several at once, sometimes none.
 */
const requestFor = (route: Route) => {
  // Drawn by weight: a route that takes a body has its body drawn three times as often.
  const dimensions: Dimension[] = [
    ...(route.pathParams.length > 0 ? ["path" as const] : []),
    "query",
    "contentType",
    "auth",
    "body",
    ...(route.body ? ["body" as const, "body" as const] : []),
  ];
  return fc.record({
    hostile: fc.oneof(
      { weight: 6, arbitrary: fc.constantFrom(...dimensions).map((d) => [d]) },
      { weight: 2, arbitrary: fc.subarray([...new Set(dimensions)], { minLength: 2 }) },
      { weight: 1, arbitrary: fc.constant<Dimension[]>([]) },
    ),
    validSegments: fc.tuple(...route.pathParams.map(validSegment)),
    hostileSegments: fc.tuple(...route.pathParams.map(hostileSegment)),
    validQuery: validQuery(route),
    hostileQuery: hostileQuery(route),
    hostileContentType,
    validPayload: validPayload(route),
    hostilePayload: hostilePayload(route),
    hostileAuth: hostileAuth(route),
  });
};
type GeneratedRequest = ReturnType<typeof requestFor> extends fc.Arbitrary<infer R> ? R : never;

const text = (value: string | IdRef) => (value instanceof IdRef ? value.toJSON() : value);

/** The request as sent: the generated values of each dimension, hostile or well formed as drawn. */
function buildRequest(route: Route, generated: GeneratedRequest) {
  const hostile = (dimension: Dimension) => generated.hostile.includes(dimension);
  const segments = hostile("path") ? generated.hostileSegments : generated.validSegments;
  const auth: Auth = hostile("auth") ? generated.hostileAuth : route.helius ? "helius" : "own";
  const contentType = hostile("contentType") ? generated.hostileContentType : "application/json";
  const payload = hostile("body") ? generated.hostilePayload : generated.validPayload;
  let i = 0;
  const path = route.path.replace(/\{\w+\}/g, () => text(segments[i++]!));
  const query = (hostile("query") ? generated.hostileQuery : generated.validQuery)
    .map(([key, value, form]) =>
      form === "bare" ? key : form === "empty" ? `${key}=` : form === "nokey" ? `=${text(value)}` : `${key}=${text(value)}`,
    )
    .join("&");
  const headers: Record<string, string> = {};
  const authorization: Record<Auth, string | undefined> = {
    own: `Bearer ${tokens.own}`,
    other: `Bearer ${tokens.other}`,
    noScopes: `Bearer ${tokens.noScopes}`,
    none: undefined,
    garbage: "Bearer not.a.jwt",
    helius: HELIUS_SECRET,
    wrongSecret: "helius-wrong-secret",
  };
  if (authorization[auth]) headers.authorization = authorization[auth]!;
  if (contentType !== "(none)") headers["content-type"] = contentType;
  const body =
    payload.kind === "json"
      ? (JSON.stringify(payload.value) ?? "")
      : payload.kind === "raw"
        ? payload.text
        : payload.kind === "bytes"
          ? payload.bytes
          : undefined;
  const url = `${path}${query === "" ? "" : `?${query}`}`;
  return { auth, request: { method: route.method, url, headers, ...(body !== undefined ? { payload: body } : {}) } };
}

const excerpt = (value: string, max = 600) => (value.length > max ? `${value.slice(0, max)}… (${value.length} characters)` : value);

/** Sends one generated request; throws, saying what was sent and answered, unless the answer is acceptable. */
async function sendAndCheck(route: Route, generated: GeneratedRequest): Promise<void> {
  const { auth, request } = buildRequest(route, generated);
  const res = await t.app.inject(request);
  const contentType = String(res.headers["content-type"] ?? "");
  let failure: string | undefined;
  if (res.statusCode >= 500) failure = `a ${res.statusCode}`;
  else if (res.statusCode >= 400) {
    let body: { status?: unknown; title?: unknown; code?: unknown } | undefined;
    try {
      body = JSON.parse(res.body) as typeof body;
    } catch {
      body = undefined;
    }
    if (!contentType.startsWith("application/problem+json")) failure = `a ${res.statusCode} that is not application/problem+json`;
    else if (body?.status !== res.statusCode || typeof body.title !== "string" || typeof body.code !== "string") {
      failure = `a ${res.statusCode} problem without status, title and code`;
    }
  }
  if (failure) {
    const sent = request.payload === undefined ? "(no body)" : excerpt(request.payload.toString());
    const headers = { ...request.headers, authorization: request.headers.authorization ? `(${auth})` : undefined };
    throw new Error(
      `${route.method} ${route.path} answered ${failure}\n` +
        `sent: ${request.method} ${excerpt(request.url, 300)}\nheaders: ${JSON.stringify(headers)}\nbody: ${sent}\n` +
        `answer: ${res.statusCode} ${contentType} ${excerpt(res.body)}`,
    );
  }
  // A destructive request that worked (a wallet or alert deleted) leaves the caller a fresh set.
  if (route.method === "DELETE" && res.statusCode < 300) {
    const owner: Owner = auth === "other" ? "other" : "own";
    await seed(owner);
  }
}

/** A route's seed: the file's, mixed with the route, so adding a route leaves the others' runs as they were. */
const routeSeed = (route: Route) =>
  [...`${route.method} ${route.path}`].reduce((hash, c) => (Math.imul(hash, 31) + c.charCodeAt(0)) | 0, SEED);

describe("no generated request makes a 5xx", () => {
  it.each(ROUTES.map((route) => [`${route.method} ${route.path}`, route] as const))(
    `%s answers none of ${RUNS_PER_ROUTE} seeded generated requests with a 5xx, and refuses with problem+json`,
    async (_name, route) => {
      await fc.assert(
        fc.asyncProperty(requestFor(route), (generated) => sendAndCheck(route, generated)),
        { seed: routeSeed(route), numRuns: RUNS_PER_ROUTE, interruptAfterTimeLimit: 45_000, markInterruptAsFailure: true },
      );
    },
    60_000,
  );
});
