// What the OpenAPI document says of each /v1 operation beyond its schemas, derived here for
// every route from its method, URL and `config.scope`, so that no route can forget it and the
// document cannot drift from what the admission hook (app.ts) enforces:
//
// - operationId, from the method and the path: generated clients name their methods after
//   it (listWallets, getWallet, createRiskAlert, listRiskAlertEvents, rotateRiskAlertSecret,
//   ingestTransactions), and without one they made names of the path that changed whenever
//   a path did. A route may set its own in schema.operationId.
// - security: the scope the operation needs, as the role of the bearer scheme that OpenAPI
//   3.1 allows for schemes other than OAuth, which is what generated clients and renderers
//   read: `[{ bearer: ["wallets:read"] }, { bearer: ["admin"] }]` (either: admin grants every
//   scope). A route that sets its own security (the Helius webhook's shared secret) keeps it.
import type { RouteOptions } from "fastify";
import { isApiRoute } from "./api-paths.ts";

/** The first word of a path that says what the operation does (POST /ingest/transactions). */
const VERB_SEGMENTS = new Set(["ingest"]);
const METHOD_VERBS: Record<string, string> = { POST: "create", PUT: "put", PATCH: "update", DELETE: "delete" };

/**
 * "GET /v1/wallets" → listWallets, "GET /v1/wallets/:walletId" → getWallet, "POST /v1/wallets"
 * → createWallet, "POST /v1/risk/alerts/:alertId/rotate-secret" → rotateRiskAlertSecret (a
 * POST to a word after an id is that word's action on the item), "POST /v1/ingest/accounts"
 * → ingestAccounts. A noun before an id is the item, in the singular.
 */
export function operationIdOf(method: string, url: string): string {
  const segments = url.replace(/^\/v1(?=\/|$)/, "").split("/").filter(Boolean);
  const words: string[] = [];
  let verb: string | undefined;
  segments.forEach((segment, i) => {
    if (segment.startsWith(":")) {
      words.push(singular(words.pop() ?? ""));
      return;
    }
    const parts = segment.split(/[-_]/).filter(Boolean);
    const action = (i === 0 && VERB_SEGMENTS.has(parts[0] ?? "")) || (method === "POST" && segments[i - 1]?.startsWith(":"));
    if (action && verb === undefined) verb = parts.shift();
    words.push(...parts);
  });
  const onItem = segments.at(-1)?.startsWith(":") === true;
  verb ??= method === "GET" ? (onItem ? "get" : "list") : (METHOD_VERBS[method] ?? method.toLowerCase());
  // A create makes one item of its collection.
  if (verb === "create" && !onItem) words.push(singular(words.pop() ?? ""));
  return verb + words.map((word) => word.charAt(0).toUpperCase() + word.slice(1)).join("");
}

function singular(word: string): string {
  if (word.endsWith("ies")) return `${word.slice(0, -3)}y`;
  return word.endsWith("s") && !word.endsWith("ss") ? word.slice(0, -1) : word;
}

/** The security requirement of an operation that needs `scope`: that scope, or admin. */
export const scopeRequirement = (scope: string) => [{ bearer: [scope] }, { bearer: ["admin"] }];

/**
 * An onRoute hook that puts each /v1 route's operationId and scope into its schema, where
 * @fastify/swagger reads them. Two routes that would share an operationId stop the app at
 * build time, naming both: the ids must stay unique, and a renamed id breaks clients.
 */
export function createOperationDocumenter(): (route: RouteOptions) => void {
  const taken = new Map<string, string>();
  return (route) => {
    // Fastify adds a HEAD route to every GET route; the document leaves them out.
    if (!isApiRoute(route.url) || route.method === "HEAD" || route.schema?.hide) return;
    // A route of several methods would give each the same id: none is made for it.
    if (typeof route.method !== "string") return;
    const schema = { ...route.schema };
    const where = `${route.method} ${route.url}`;
    schema.operationId ??= operationIdOf(route.method, route.url);
    const holder = taken.get(schema.operationId);
    if (holder !== undefined) {
      throw new Error(`operationId ${schema.operationId} of ${where} is already ${holder}'s: give one of them its own schema.operationId`);
    }
    taken.set(schema.operationId, where);
    const scope = route.config?.scope;
    if (scope && !route.config?.public && schema.security === undefined) {
      schema.security = scopeRequirement(scope);
      const needs = `Needs a token with the scope ${scope} (or admin).`;
      schema.description = schema.description ? `${schema.description}\n\n${needs}` : needs;
    }
    route.schema = schema;
  };
}
