// PUT /v1/risk/labels: operators load counterparty labels (OFAC, their vendors' lists). A
// label that changes rescores every tracked address that ever dealt with the labelled address; the
// rises are evaluated against risk_score_increase alerts by the risk workers. DELETE removes labels
// (a delisting, a row loaded by mistake) through the same rescore; GET reads one back.
import { Type, type FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { Deps } from "../../deps.ts";
import { LABEL_CATEGORIES } from "../../domain/types.ts";
import { findLabel } from "../../db/queries/risk-labels.ts";
import { applyLabels, removeLabels } from "../../pipeline/relabel.ts";
import { INGEST_BODY_LIMIT } from "../app.ts";
import { invalid, notFound } from "../problem.ts";
import { AddressSchema, assertAddress, described, errorResponses, textSchema } from "../schemas.ts";

export const MAX_LABELS = 10_000;

const LabelSchema = Type.Object(
  {
    address: AddressSchema,
    category: Type.Enum(LABEL_CATEGORIES, { description: "what the address is" }),
    score: Type.Integer({ minimum: 0, maximum: 100, description: "how risky the address is, 0–100" }),
    // null as well as absent: GET answers "source": null for a label without one, and a label
    // read back must be accepted as it was read.
    source: Type.Optional(
      Type.Union([textSchema({ minLength: 1, maxLength: 200 }), Type.Null()], { description: "where the label comes from, e.g. ofac-sdn; null or absent when none" }),
    ),
  },
  { additionalProperties: false },
);

const LabelsBodySchema = Type.Object(
  { labels: Type.Array(LabelSchema, { minItems: 1, maxItems: MAX_LABELS }) },
  { additionalProperties: false },
);

// Delistings come as lists, so a removal is bulk too; 10,000 addresses fit in the default 1 MiB.
// The one DELETE that takes a body (the others refuse fields: no-body.ts): a list of addresses has
// no place in a URL, and a POST .../remove would hide from an HTTP log that this deletes.
const RemoveBodySchema = Type.Object(
  { addresses: Type.Array(AddressSchema, { minItems: 1, maxItems: MAX_LABELS, description: "the addresses whose labels to remove" }) },
  { additionalProperties: false },
);

const LabelsRemovedSchema = Type.Object({
  removed: Type.Integer({ description: "labels removed: the addresses that had one (an address without a label is not an error)" }),
});

const LabelParamsSchema = Type.Object({ address: AddressSchema });

const StoredLabelSchema = Type.Object({
  address: Type.String(),
  category: Type.Enum(LABEL_CATEGORIES),
  score: Type.Integer({ minimum: 0, maximum: 100 }),
  source: Type.Union([Type.String(), Type.Null()], { description: "where the label comes from; null when none was given" }),
  updatedAt: Type.String({ format: "date-time", description: "when the label was last created or replaced" }),
});

/** Each address valid and named once in the request; `pathOf` names the place of the i-th in a refusal. */
function assertUniqueAddresses(addresses: readonly string[], pathOf: (i: number) => string): void {
  const seen = new Set<string>();
  addresses.forEach((address, i) => {
    assertAddress(pathOf(i), address);
    if (seen.has(address)) throw invalid(pathOf(i), "appears more than once in the request");
    seen.add(address);
  });
}

const LabelsUpsertedSchema = Type.Object({
  upserted: Type.Integer({ description: "labels created or replaced (one per address)" }),
});

export function riskLabelRoutes(deps: Deps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.put(
      "/risk/labels",
      {
        // 10,000 labels with their sources do not fit in the default 1 MiB.
        bodyLimit: INGEST_BODY_LIMIT,
        config: { scope: "risk:write" },
        schema: {
          tags: ["risk"],
          summary: "Create or replace counterparty labels (bulk); changed labels rescore the tracked addresses that dealt with them",
          body: LabelsBodySchema,
          response: { 200: described(LabelsUpsertedSchema, "the labels stored; the wallets that dealt with a changed address are rescored"), ...errorResponses(400, 413, 415) },
        },
      },
      async (request) => {
        assertUniqueAddresses(request.body.labels.map((label) => label.address), (i) => `body.labels.${i}.address`);
        const labels = request.body.labels.map((label) => ({ ...label, source: label.source ?? null }));
        const { upserted } = await applyLabels(deps, labels);
        return { upserted };
      },
    );

    app.delete(
      "/risk/labels",
      {
        config: { scope: "risk:write" },
        schema: {
          tags: ["risk"],
          summary: "Remove counterparty labels (bulk); the tracked addresses that dealt with them are rescored without them",
          body: RemoveBodySchema,
          response: { 200: described(LabelsRemovedSchema, "the labels removed; the wallets that dealt with those addresses are rescored"), ...errorResponses(400, 413, 415) },
        },
      },
      async (request) => {
        assertUniqueAddresses(request.body.addresses, (i) => `body.addresses.${i}`);
        const { removed } = await removeLabels(deps, request.body.addresses);
        return { removed };
      },
    );

    // risk:write, not a read scope of its own: labels are the operators' data, shared by every
    // caller, and the callers who load them are the ones who need to check them.
    app.get(
      "/risk/labels/:address",
      {
        config: { scope: "risk:write" },
        schema: {
          tags: ["risk"],
          summary: "Get the label of an address",
          params: LabelParamsSchema,
          response: { 200: described(StoredLabelSchema, "the address's label"), ...errorResponses(400, 404) },
        },
      },
      async (request) => {
        const { address } = request.params;
        assertAddress("params.address", address);
        const label = await findLabel(deps.sql, address);
        if (!label) throw notFound(`the label of ${address}`);
        return label;
      },
    );
  };
}
