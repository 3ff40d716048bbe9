// Tracked wallets (interface 4.2 and 4.4, plus how a wallet becomes tracked and stops being).
import { Type, type FastifyPluginAsyncTypebox, type Static } from "@fastify/type-provider-typebox";
import type { FastifyReply } from "fastify";
import type { Deps } from "../../deps.ts";
import {
  WALLET_SORT_KEYS,
  deleteWallet,
  findWalletIdByAddress,
  getWallet,
  listWallets,
  updateWallet,
  type WalletDetailRow,
} from "../../db/queries/wallets.ts";
import { LABEL_CATEGORIES, RISK_FACTORS } from "../../domain/types.ts";
import { newId } from "../../ids.ts";
import { trackWallet } from "../../pipeline/track-wallet.ts";
import { IfMatchHeaders, PreconditionFailedResponse, entityTagOf, ifMatchOf, preconditionFailed, withEntityTag } from "../etag.ts";
import { assertNoBody } from "../no-body.ts";
import type { ReadCache } from "../read-cache.ts";
import { ProblemError, capReached, notFound } from "../problem.ts";
import { AddressSchema, assertAddress, described, errorResponses, idSchema, parseQueryInteger, problemResponses, queryInteger, refTo, textSchema, withLocation } from "../schemas.ts";

const PAGE = { min: 1, max: 1_000_000, default: 1 };
const LIMIT = { min: 1, max: 100, default: 25 };
const TAG_PATTERN = "^[a-z0-9_-]{1,32}$";
/** One tag, as a wallet's tags are written (create, PATCH) and as the list filters by. */
const tagSchema = (description: string) => Type.String({ pattern: TAG_PATTERN, description });

const ListQuerySchema = Type.Object(
  {
    page: queryInteger({ ...PAGE, description: "page number" }),
    limit: queryInteger({ ...LIMIT, description: "results per page" }),
    sortBy: Type.Optional(Type.Enum(WALLET_SORT_KEYS, { default: "lastActivity" })),
    order: Type.Optional(
      Type.Enum(["asc", "desc"], { default: "desc", description: "extension; nulls sort last either way, ties by walletId" }),
    ),
    address: Type.Optional({
      ...AddressSchema,
      // Also a pattern failure's message ("must be …"), so it opens with what the value is.
      description:
        "a Solana address (base58 of 32 bytes), matched exactly (extension): only the caller's wallet tracking it is listed, " +
        "total 1, or none, total 0, when the caller does not track it (even if another caller does)",
    }),
    tag: Type.Optional(
      tagSchema(
        "one tag, 1–32 characters of a-z, 0-9, _ and -, matched exactly (extension): only the caller's wallets carrying it among their tags are listed; " +
          "one tag per request, given once",
      ),
    ),
  },
  { additionalProperties: false },
);

const AliasSchema = Type.Union([textSchema({ minLength: 1, maxLength: 64 }), Type.Null()], {
  description: "the caller's name for the wallet, 1–64 characters; null for none",
});
const TagsSchema = Type.Array(
  tagSchema("1–32 characters of a-z, 0-9, _ and -"),
  { maxItems: 20, uniqueItems: true, description: "the caller's labels, at most 20, each once" },
);

const CreateBodySchema = Type.Object(
  { address: AddressSchema, alias: Type.Optional(AliasSchema), tags: Type.Optional(TagsSchema) },
  { additionalProperties: false },
);
const UpdateBodySchema = Type.Object(
  { alias: Type.Optional(AliasSchema), tags: Type.Optional(TagsSchema) },
  { additionalProperties: false, minProperties: 1, description: "change at least one of alias, tags" },
);
const ParamsSchema = Type.Object({ walletId: idSchema("wal", "wallet") });

/**
 * The create's 409, code `conflict` either way: the caller tracks the address already
 * (Location names that wallet), or tracks as many wallets as MAX_WALLETS_PER_CALLER allows (no
 * Location: no one wallet is in the way; `limit` and the detail name the cap).
 */
const CreateConflictResponse = {
  409: {
    ...problemResponses(409)[409],
    description:
      "RFC 9457 problem details, code conflict. With Location: the caller already tracks the address (Location names that wallet; a retry of a create that succeeded gets this, also at the cap). " +
      "Without Location, and with the extension member limit ({ setting: MAX_WALLETS_PER_CALLER, max }): the caller tracks as many wallets as the service allows; " +
      "the detail says what to do: stop tracking a wallet (DELETE) to free a slot (retrying does not help). The already-tracked 409 has no limit",
    headers: { location: { type: "string", description: "the URL of the caller's wallet that already tracks the address (absent when the cap refused the create)" } },
  },
};

/** A create over the cap: a conflict whose `limit` names the cap (problem.ts), and whose detail says what the caller (or the operator) can do. */
const walletCapReached = (limit: number) =>
  capReached(
    "MAX_WALLETS_PER_CALLER",
    limit,
    `you track ${limit} wallets already, the most one caller may track (MAX_WALLETS_PER_CALLER=${limit}): ` +
      "stop tracking one you no longer need (DELETE /v1/wallets/{walletId}; its alerts go with it) to free a slot, or ask the operator to raise MAX_WALLETS_PER_CALLER",
  );

// Nullable scalars as type arrays: OpenAPI 3.1 reads them, and fast-json-stringify
// serialises them without trying each branch of an anyOf.
const nullable = <T>(schema: Record<string, unknown> & { type: string }) =>
  Type.Unsafe<T | null>({ ...schema, type: [schema.type, "null"] });

const NullableAlias = nullable<string>({ type: "string" });
const LastActivity = nullable<string>({
  type: "string",
  format: "date-time",
  description: "blockTime of the newest transaction, ISO 8601 UTC; null before any",
});
const BalanceAsOf = nullable<string>({
  type: "string",
  format: "date-time",
  description:
    "extension: when the service stored the account snapshot (POST /v1/ingest/accounts) that balance, tokenAccounts and nfts come from, ISO 8601 UTC; " +
    "null when none has been stored, and those then read 0 and empty for want of one, not because the wallet is empty",
});

// Named schemas: components.schemas in the OpenAPI document, a $ref where a route uses them (refTo, schema-components.ts).
export const WalletSummarySchema = Type.Object(
  {
    walletId: Type.String({ description: "wal_…" }),
    address: Type.String(),
    alias: NullableAlias,
    balance: Type.Number({ description: "SOL" }),
    tokenAccounts: Type.Integer({ description: "count of token accounts" }),
    nftCount: Type.Integer(),
    riskScore: Type.Integer({ minimum: 0, maximum: 100 }),
    lastActivity: LastActivity,
    balanceAsOf: BalanceAsOf,
  },
  { $id: "WalletSummary", description: "a tracked wallet as GET /v1/wallets lists it (its holdings counted; GET /v1/wallets/{walletId} has them in full)" },
);

export const WalletDetailSchema = Type.Object(
  {
    walletId: Type.String({ description: "wal_…" }),
    address: Type.String(),
    alias: NullableAlias,
    balance: Type.Number({ description: "SOL" }),
    tokenAccounts: Type.Array(
      Type.Object({
        mint: Type.String(),
        symbol: Type.String(),
        balance: Type.Number({ description: "UI units (decimals applied)" }),
        usdValue: Type.Number({ description: "USD" }),
      }),
      { description: "highest usdValue first" },
    ),
    nfts: Type.Array(
      Type.Object({
        mint: Type.String(),
        name: Type.String(),
        collection: Type.String(),
        floorPrice: Type.Number({ description: "USD" }),
      }),
      { description: "highest floorPrice first" },
    ),
    riskScore: Type.Integer({ minimum: 0, maximum: 100 }),
    riskFactors: Type.Array(Type.Enum(RISK_FACTORS), { description: "active risk factor identifiers" }),
    label: Type.Union(
      [
        Type.Object({
          category: Type.Enum(LABEL_CATEGORIES),
          score: Type.Integer({ minimum: 0, maximum: 100 }),
          source: Type.Union([Type.String(), Type.Null()]),
        }),
        Type.Null(),
      ],
      {
        description:
          "extension: the address's own label from PUT /v1/risk/labels (a wallet on a sanctions list, say), null when it has none; when several lists label it, its effective label (the highest score, as GET /v1/risk/labels/{address} answers at its top level). Not a factor of its own riskScore, which measures whom it deals with; it raises the scores of the wallets that deal with it",
      },
    ),
    tags: Type.Array(Type.String()),
    trackedAt: Type.String({ format: "date-time", description: "extension: when the caller started tracking" }),
    lastActivity: LastActivity,
    balanceAsOf: BalanceAsOf,
  },
  { $id: "WalletDetail", description: "a tracked wallet, its holdings and its risk (GET, POST and PATCH of /v1/wallets)" },
);
const WalletDetail = refTo(WalletDetailSchema);

const ListResponseSchema = Type.Object({
  wallets: Type.Array(refTo(WalletSummarySchema)),
  total: Type.Integer({ description: "count of the caller's tracked wallets (those address and tag keep, when given)" }),
  page: Type.Integer(),
  limit: Type.Integer(),
});

type WalletPage = Static<typeof ListResponseSchema>;

const unixToIso = (seconds: number | null) => (seconds === null ? null : new Date(seconds * 1000).toISOString());
const msToIso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

const toDetail = (row: WalletDetailRow) => ({
  ...row,
  trackedAt: new Date(row.trackedAt * 1000).toISOString(),
  lastActivity: unixToIso(row.lastActivity),
  balanceAsOf: msToIso(row.balanceAsOf),
});

export function walletRoutes(deps: Deps, readCache: ReadCache): FastifyPluginAsyncTypebox {
  return async (app) => {
    const tags = ["wallets"];

    app.get(
      "/wallets",
      {
        config: { scope: "wallets:read" },
        schema: {
          tags,
          summary: "List tracked wallets",
          description:
            "Ordered by sortBy (default lastActivity) in order (default desc), nulls last either way, ties by walletId ascending; paged by page and limit. " +
            "Sorted by lastActivity, balance or riskScore, the order moves as ingest runs, so a page can repeat or miss wallets of the one before; " +
            "sortBy=trackedAt&order=asc keeps its order (new wallets come last, and only a delete shifts the later pages). " +
            "address and tag (extensions) narrow the list, both together when both are given, and total counts what they keep: " +
            "address finds the caller's wallet for an address without paging (or tracking it), tag lists the wallets carrying one tag.",
          querystring: ListQuerySchema,
          response: { 200: described(ListResponseSchema, "the caller's tracked wallets, one page"), ...errorResponses(400) },
        },
      },
      async (request, reply) => {
        const page = parseQueryInteger("page", request.query.page, PAGE);
        const limit = parseQueryInteger("limit", request.query.limit, LIMIT);
        const sortBy = request.query.sortBy ?? "lastActivity";
        const order = request.query.order ?? "desc";
        const { address, tag } = request.query;
        if (address !== undefined) assertAddress("query.address", address);
        // The page is kept serialized: a hit costs neither the query nor the serializer. Neither
        // an address (base58) nor a tag (a-z, 0-9, _, -) can hold the separator.
        const key = `wallets|${request.caller.sub}|${page}|${limit}|${sortBy}|${order}|${address ?? ""}|${tag ?? ""}`;
        const body = await readCache.load(key, async () => {
          const { rows, total } = await listWallets(
            deps.sql,
            request.caller.sub,
            { offset: (page - 1) * limit, limit, sortBy, order },
            { address, tag },
          );
          const wallets = rows.map((row) => ({ ...row, lastActivity: unixToIso(row.lastActivity), balanceAsOf: msToIso(row.balanceAsOf) }));
          const result: WalletPage = { wallets, total, page, limit };
          return (reply as FastifyReply).serializeInput(result, "200", "application/json") as string;
        });
        // A string with its content type is sent as it is (the schema already shaped it).
        return (reply as FastifyReply).type("application/json; charset=utf-8").send(body);
      },
    );

    app.get(
      "/wallets/:walletId",
      {
        config: { scope: "wallets:read" },
        schema: {
          tags,
          summary: "Get wallet details",
          params: ParamsSchema,
          response: { 200: withEntityTag(described(WalletDetail, "the wallet, its holdings and its risk")), ...errorResponses(400, 404) },
        },
      },
      async (request, reply) => {
        const row = await getWallet(deps.sql, request.caller.sub, request.params.walletId);
        if (!row) throw notFound(`wallet ${request.params.walletId}`);
        const detail = toDetail(row);
        reply.header("etag", entityTagOf(detail));
        return detail;
      },
    );

    app.post(
      "/wallets",
      {
        config: { scope: "wallets:write" },
        schema: {
          tags,
          summary: "Track a wallet",
          body: CreateBodySchema,
          response: {
            201: withLocation(WalletDetail, "wallet created", "the new wallet's URL"),
            ...errorResponses(400, 413, 415),
            ...CreateConflictResponse,
          },
        },
      },
      async (request, reply) => {
        const { address, alias = null, tags: walletTags = [] } = request.body;
        assertAddress("body.address", address);
        const id = newId("wal");
        const owner = request.caller.sub;
        const outcome = await trackWallet(deps, { id, owner, address, alias, tags: walletTags });
        if (outcome.kind === "capped") throw walletCapReached(outcome.limit);
        if (outcome.kind === "unavailable") {
          throw new ProblemError("unavailable", `${outcome.reason}; nothing was stored, retry shortly`, { headers: { "retry-after": "5" } });
        }
        if (outcome.kind === "already-tracked") {
          // A client retrying a create whose answer it lost needs the id it already has: its
          // own wallet, so naming it tells nothing to anyone else.
          const existing = await findWalletIdByAddress(deps.sql, owner, address);
          throw new ProblemError(
            "conflict",
            existing
              ? `address ${address} is already tracked by this caller as wallet ${existing}`
              : `address ${address} is already tracked by this caller`,
            existing ? { headers: { location: `/v1/wallets/${existing}` } } : {},
          );
        }
        const row = await getWallet(deps.sql, owner, id);
        if (!row) throw notFound(`wallet ${id}`); // deleted by a concurrent request
        return reply.code(201).header("location", `/v1/wallets/${id}`).send(toDetail(row));
      },
    );

    app.patch(
      "/wallets/:walletId",
      {
        config: { scope: "wallets:write" },
        schema: {
          tags,
          summary: "Change a wallet's alias or tags",
          description:
            "tags replaces the whole list. Without If-Match the last write wins: to add a tag without losing another client's, " +
            "send the ETag of the GET you built the list from in If-Match, and on a 412 read again and retry.",
          params: ParamsSchema,
          headers: IfMatchHeaders,
          body: UpdateBodySchema,
          response: {
            200: withEntityTag(described(WalletDetail, "the wallet as this request changed it")),
            ...errorResponses(400, 404, 413, 415),
            ...PreconditionFailedResponse,
          },
        },
      },
      async (request, reply) => {
        const { walletId } = request.params;
        const ifMatch = ifMatchOf(request.headers["if-match"]);
        const outcome = await updateWallet(deps.sql, request.caller.sub, walletId, request.body, ifMatch && ((row) => ifMatch(toDetail(row))));
        if (outcome.kind === "not-found") throw notFound(`wallet ${walletId}`);
        if (outcome.kind === "precondition-failed") throw preconditionFailed(`wallet ${walletId}`);
        const detail = toDetail(outcome.row);
        reply.header("etag", entityTagOf(detail));
        return detail;
      },
    );

    app.delete(
      "/wallets/:walletId",
      {
        config: { scope: "wallets:write" },
        schema: {
          tags,
          summary: "Stop tracking a wallet (its alerts are deleted too)",
          params: ParamsSchema,
          headers: IfMatchHeaders,
          // A DELETE may carry a body, and the body parser judges it before the route: 413, 415.
          response: { 204: Type.Null({ description: "deleted" }), ...errorResponses(400, 404, 413, 415), ...PreconditionFailedResponse },
        },
      },
      async (request, reply) => {
        assertNoBody(request.body);
        const { walletId } = request.params;
        const ifMatch = ifMatchOf(request.headers["if-match"]);
        // The caller is both the owner the delete is scoped to and who the archive says deleted it.
        const outcome = await deleteWallet(deps.sql, request.caller.sub, walletId, request.caller.sub, ifMatch && ((row) => ifMatch(toDetail(row))));
        if (outcome.kind === "not-found") throw notFound(`wallet ${walletId}`);
        if (outcome.kind === "precondition-failed") throw preconditionFailed(`wallet ${walletId}`);
        return reply.code(204).send(null);
      },
    );
  };
}
