// PUT /v1/risk/labels: operators load counterparty labels (OFAC, their vendors' lists), one per
// address and source, so that one list never overwrites or removes another's verdict. A label that
// changes rescores every tracked address that ever dealt with the labelled address; the rises are
// evaluated against risk_score_increase alerts by the risk workers. DELETE removes labels (a
// delisting, a row loaded by mistake: one list's, or every list's) through the same rescore; GET
// reads an address's labels back.
//
// Labels are shared by every caller: a change moves the scores, and fires the risk_score_increase
// alerts, of every caller's wallets. So each PUT or DELETE is a load with an id (lld_…, in its
// answer and its log line): each label it adds, changes or removes is recorded with the load and
// the caller's sub (label_changes, read at GET /v1/risk/labels/{address}/history), the score
// changes it causes name it, and each label keeps the sub of the load that last changed it
// (updated_by). A label loaded again as it is is no change: none of these move.
import { Type, type FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { Deps } from "../../deps.ts";
import { LABEL_CATEGORIES } from "../../domain/types.ts";
import { findLabels } from "../../db/queries/risk-labels.ts";
import { applyLabels, removeLabels } from "../../pipeline/relabel.ts";
import { INGEST_BODY_LIMIT } from "../app.ts";
import { invalid, notFound } from "../problem.ts";
import { AddressSchema, assertAddress, described, errorResponses, textSchema, wholeNumber } from "../schemas.ts";

export const MAX_LABELS = 10_000;

// null as well as absent: GET answers "source": null for a label without one, and a label read
// back must be accepted as it was read. Never "": that is no source name.
const SourceSchema = (description: string) => Type.Union([textSchema({ minLength: 1, maxLength: 200 }), Type.Null()], { description });

const LabelSchema = Type.Object(
  {
    address: AddressSchema,
    category: Type.Enum(LABEL_CATEGORIES, { description: "what the address is" }),
    score: wholeNumber({ minimum: 0, maximum: 100, description: "how risky the address is, 0–100" }),
    source: Type.Optional(
      SourceSchema(
        "the list the label comes from, e.g. ofac-sdn, trimmed (only spaces is a 400); null or absent when none. A label is kept per address and source: another source's label of the same address stays",
      ),
    ),
  },
  { additionalProperties: false },
);

const LabelsBodySchema = Type.Object(
  { labels: Type.Array(LabelSchema, { minItems: 1, maxItems: MAX_LABELS, description: "each address and source once" }) },
  { additionalProperties: false },
);

// Delistings come as lists, so a removal is bulk too; 10,000 addresses fit in the default 1 MiB.
// The one DELETE that takes a body (the others refuse fields: no-body.ts): a list of addresses has
// no place in a URL, and a POST .../remove would hide from an HTTP log that this deletes.
const RemoveBodySchema = Type.Object(
  {
    addresses: Type.Array(AddressSchema, { minItems: 1, maxItems: MAX_LABELS, description: "the addresses whose labels to remove" }),
    source: Type.Optional(
      SourceSchema(
        "remove only this list's labels of the addresses, trimmed as on PUT (null: the labels loaded without a source); absent: every list's label of them",
      ),
    ),
  },
  { additionalProperties: false },
);

const LoadIdSchema = Type.String({
  description: "this load's id (lld_…): its changes are in each address's label history (GET /v1/risk/labels/{address}/history), and the score changes they caused name it",
});

const LabelsRemovedSchema = Type.Object({
  removed: Type.Integer({
    description:
      "labels removed, one per address and source (an address with labels from two lists counts 2 when both go); an address without such a label is not an error",
  }),
  loadId: LoadIdSchema,
});

const LabelParamsSchema = Type.Object({ address: AddressSchema });

const labelFields = {
  category: Type.Enum(LABEL_CATEGORIES),
  score: Type.Integer({ minimum: 0, maximum: 100 }),
  source: Type.Union([Type.String(), Type.Null()], { description: "the list the label comes from; null when none was given" }),
  updatedAt: Type.String({ format: "date-time", description: "when the label was created, or its category or score last changed (a load that left it as it was does not move it)" }),
};

const StoredLabelSchema = Type.Object({
  address: Type.String(),
  ...labelFields,
  labels: Type.Array(Type.Object(labelFields), {
    description: "every list's label of the address, the effective one (the top-level fields) first, then by the same order",
  }),
});

/**
 * A source as stored: trimmed, so "ofac " and "ofac" are one list (two labels of one address
 * otherwise, and a removal by "ofac" left the other standing); null for none. Only spaces names
 * no list: refused, as native ingest refuses a token of spaces.
 */
function labelSource(given: string | null | undefined, path: string): string | null {
  if (given === undefined || given === null) return null;
  const source = given.trim();
  if (source === "") throw invalid(path, "must name the list the label comes from, not only spaces (null or absent for none)");
  return source;
}

/** Each address valid, and each (address, key) named once in the request; `pathOf` names the place of the i-th in a refusal. */
function assertUnique(addresses: readonly string[], keyOf: (i: number) => string, pathOf: (i: number) => string, message: string): void {
  const seen = new Set<string>();
  addresses.forEach((address, i) => {
    assertAddress(pathOf(i), address);
    const key = keyOf(i);
    if (seen.has(key)) throw invalid(pathOf(i), message);
    seen.add(key);
  });
}

const LabelsUpsertedSchema = Type.Object({
  upserted: Type.Integer({ description: "labels stored (one per address and source): created, changed, or already so" }),
  changed: Type.Integer({
    description: "of those, the labels this load created or whose category or score it changed; a label loaded again as it is keeps its updatedAt, and rescores nothing",
  }),
  loadId: LoadIdSchema,
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
          summary: "Create or replace counterparty labels (bulk), one per address and source; changed labels rescore the tracked addresses that dealt with them",
          body: LabelsBodySchema,
          response: {
            200: described(LabelsUpsertedSchema, "the labels stored, and the wallets that dealt with a changed address rescored"),
            ...errorResponses(400, 413, 415),
          },
        },
      },
      async (request) => {
        const labels = request.body.labels.map((label, i) => ({ ...label, source: labelSource(label.source, `body.labels.${i}.source`) }));
        assertUnique(
          labels.map((label) => label.address),
          (i) => JSON.stringify([labels[i]!.address, labels[i]!.source]),
          (i) => `body.labels.${i}.address`,
          "appears more than once in the request with the same source",
        );
        const result = await applyLabels(deps, labels, request.caller.sub);
        request.log.info(
          {
            caller: request.caller.sub,
            loadId: result.loadId,
            labels: result.upserted,
            changedLabels: result.changedLabels,
            changedAddresses: result.changed,
            rescored: result.rescored,
          },
          "labels: upserted",
        );
        return { upserted: result.upserted, changed: result.changedLabels, loadId: result.loadId };
      },
    );

    app.delete(
      "/risk/labels",
      {
        config: { scope: "risk:write" },
        schema: {
          tags: ["risk"],
          summary: "Remove counterparty labels (bulk), one list's or every list's; the tracked addresses that dealt with them are rescored without them",
          body: RemoveBodySchema,
          response: {
            200: described(LabelsRemovedSchema, "the labels removed, and the wallets that dealt with those addresses rescored"),
            ...errorResponses(400, 413, 415),
          },
        },
      },
      async (request) => {
        const { addresses } = request.body;
        // Absent: every list's labels; null: those loaded without one.
        const source = request.body.source === undefined ? undefined : labelSource(request.body.source, "body.source");
        assertUnique(addresses, (i) => addresses[i]!, (i) => `body.addresses.${i}`, "appears more than once in the request");
        const result = await removeLabels(deps, addresses, source, request.caller.sub);
        request.log.info(
          { caller: request.caller.sub, loadId: result.loadId, source, removed: result.removed, changedAddresses: result.changed, rescored: result.rescored },
          "labels: removed",
        );
        return { removed: result.removed, loadId: result.loadId };
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
          summary: "Get the labels of an address: its effective label, and every list's",
          params: LabelParamsSchema,
          response: {
            200: described(
              StoredLabelSchema,
              "the address's effective label at the top level: of its labels, the highest score; on a tie, the category whose risk factor weighs most (sanctioned, mixer, scam/hack/darknet, the others), then the source in byte order, none first. `labels` holds every list's label in that order",
            ),
            ...errorResponses(400, 404),
          },
        },
      },
      async (request) => {
        const { address } = request.params;
        assertAddress("params.address", address);
        const labels = await findLabels(deps.sql, address);
        if (!labels) throw notFound(`the label of ${address}`);
        return labels;
      },
    );
  };
}
