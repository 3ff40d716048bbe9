// How many arrays and objects (containers) a route's JSON body may hold, for the scan that reads
// a body before JSON.parse does (json-text-scan.ts). Parsing costs the event loop per container
// more than per byte, and so does everything that walks the value after (ajv, which with
// allErrors names each wrong item; the repeated-keys and prototype-key checks): a 1 MiB body of
// small shallow arrays (`[[[[0]]]],…`, 416,000 of them) held the API 50–180 ms on a route whose
// valid bodies hold 2, and 10 MiB of them 1–5 s on an ingest route; refused, 2 and 20 ms. Such a
// body is refused unparsed, past what the route can use:
//
//   - what its body schema lets a valid body hold (an object is one, an array one plus its
//     items'), twice over and 64 more, so that a body a little off (an unknown field holding an
//     object, a batch a few items too long) still gets the schema's own words; and
//   - never more than one per 64 bytes of the route's body limit, which binds where the schema
//     says too little: a schema that leaves a place open (none, a free-form object), or one whose
//     items are many but each long. /ingest/accounts takes 10,000 token accounts and NFTs for each
//     of 1,000 addresses; an item takes at least 80 bytes (its 32+ character mint and its fields
//     by name), so 10 MiB holds about 131,000 of them, under the 163,840 allowed.
//
// A route without a body schema takes none ({} passes, no-body.ts), or is Bull Board's, whose
// bodies (a job's name, data and options) hold a handful: bounded as a body of one.

/** One container per this many bytes of the body limit, at most (see above: 80 bytes is the least a legit item takes). */
export const BYTES_PER_CONTAINER = 64;
/** What a route's bound adds to twice its schema's most. */
export const CONTAINER_SLACK = 64;

const schemaMaxima = new WeakMap<object, number>();

/**
 * The containers a body may hold before it is refused unparsed, on a route with this body schema
 * (undefined: the route takes no body) and body limit.
 */
export function containerBound(bodySchema: unknown, bodyLimit: number): number {
  const most = bodySchema === undefined ? 1 : schemaMaximum(bodySchema);
  return Math.min(2 * most + CONTAINER_SLACK, Math.floor(bodyLimit / BYTES_PER_CONTAINER));
}

/** maxContainers, walked once per schema: a route's schema is the same object on each request. */
function schemaMaximum(schema: unknown): number {
  if (schema === null || typeof schema !== "object") return maxContainers(schema);
  let most = schemaMaxima.get(schema);
  if (most === undefined) {
    most = maxContainers(schema);
    schemaMaxima.set(schema, most);
  }
  return most;
}

/**
 * The most containers a value valid against `schema` (JSON Schema, as TypeBox writes it) can
 * hold, or Infinity when the schema does not bound them. What it does not know (a $ref, a
 * schema without a type) it takes as unbounded: the bound by size applies then.
 */
export function maxContainers(schema: unknown): number {
  if (schema === null || typeof schema !== "object") return schema === false ? 0 : Infinity;
  const s = schema as Record<string, unknown>;
  const bounds: number[] = [];
  // A value must match one branch of anyOf/oneOf (the most of any), and every branch of allOf (the least of them).
  const branches = (s.anyOf ?? s.oneOf) as unknown[] | undefined;
  if (Array.isArray(branches)) bounds.push(Math.max(0, ...branches.map(maxContainers)));
  if (Array.isArray(s.allOf)) bounds.push(Math.min(...(s.allOf as unknown[]).map(maxContainers)));
  if ("const" in s) bounds.push(containersIn(s.const));
  if (Array.isArray(s.enum)) bounds.push(Math.max(0, ...s.enum.map(containersIn)));
  if (s.type !== undefined) bounds.push(Math.max(0, ...[s.type].flat().map((type) => maxOfType(type, s))));
  return bounds.length === 0 ? Infinity : Math.min(...bounds);
}

function maxOfType(type: unknown, s: Record<string, unknown>): number {
  if (type === "object") return maxOfObject(s);
  if (type === "array") return maxOfArray(s);
  return 0;
}

function maxOfObject(s: Record<string, unknown>): number {
  // Keys not listed may hold anything, unless what they may hold is no container at all.
  if (s.patternProperties !== undefined || (s.additionalProperties !== false && maxContainers(s.additionalProperties ?? true) > 0)) {
    return Infinity;
  }
  const properties = Object.values((s.properties ?? {}) as Record<string, unknown>);
  return 1 + properties.reduce<number>((sum, property) => sum + maxContainers(property), 0);
}

function maxOfArray(s: Record<string, unknown>): number {
  if (Array.isArray(s.items) || s.prefixItems !== undefined) return Infinity;
  const perItem = maxContainers(s.items ?? true);
  if (perItem === 0) return 1;
  return typeof s.maxItems === "number" ? 1 + s.maxItems * perItem : Infinity;
}

/** The containers of a JSON value (a const or enum member). */
function containersIn(value: unknown): number {
  if (value === null || typeof value !== "object") return 0;
  return 1 + Object.values(value).reduce<number>((sum, item) => sum + containersIn(item), 0);
}
