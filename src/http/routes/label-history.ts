// GET /v1/risk/labels/{address}/history: every change of an address's labels, oldest first, each
// with the load (PUT or DELETE /v1/risk/labels) it came in, who made it and when: what a
// compliance review reads to say which list flagged an address, who loaded or delisted it, and
// which load a score change (risk_score_history's cause `labels:<load id>`) came from.
import { Type, type FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { labelHistory } from "../../db/queries/label-changes.ts";
import type { Deps } from "../../deps.ts";
import { LABEL_CATEGORIES } from "../../domain/types.ts";
import { invalid } from "../problem.ts";
import { AddressSchema, assertAddress, described, errorResponses, idSchema, parseQueryInteger, queryInteger } from "../schemas.ts";

/** As an alert's notifications list's: an address changes label rarely, and a page is read whole. */
export const LABEL_HISTORY_LIMIT = { min: 1, max: 500, default: 50 } as const;

const DESCRIPTION =
  "Every change of the address's labels, oldest first, in the order they were recorded: each label a load (a PUT or DELETE of " +
  "/v1/risk/labels) added, changed or removed, with the load's id, its caller (the token's sub) and its time. A label loaded " +
  "again as it was is no change and is not listed. An address never labelled has an empty history. To read on, send after= " +
  "the loadId of the last change received; a page ends with the whole of its last load's changes of the address (one per " +
  "list), so it may hold a few more than limit. hasMore false: nothing more for now. An after that is no load of this " +
  "address is a 400. Changes made before the service recorded them (migration 0028) are not listed.";

const LabelValueSchema = Type.Object({ category: Type.Enum(LABEL_CATEGORIES), score: Type.Integer({ minimum: 0, maximum: 100 }) });

const LabelHistorySchema = Type.Object({
  changes: Type.Array(
    Type.Object({
      loadId: Type.String({ description: "the load (lld_…) that made the change, as its PUT or DELETE answered; its score changes name it" }),
      at: Type.String({ format: "date-time", description: "when the load was made" }),
      by: Type.String({ description: "the load's caller: its token's sub" }),
      source: Type.Union([Type.String(), Type.Null()], { description: "the list of the label; null for one loaded without a source" }),
      change: Type.Enum(["added", "changed", "removed"] as const, { description: "added: previous is null; removed: label is null" }),
      previous: Type.Union([LabelValueSchema, Type.Null()], { description: "the label before the change; null when the load added it" }),
      label: Type.Union([LabelValueSchema, Type.Null()], { description: "the label the load set; null when it removed it" }),
    }),
    { description: "oldest first" },
  ),
  hasMore: Type.Boolean({ description: "whether the history goes on past this page now; to read on, set after to the loadId of the last change" }),
});

const LabelHistoryQuery = Type.Object(
  {
    limit: queryInteger({ ...LABEL_HISTORY_LIMIT, description: "changes to return (a page may end a few past it: see the description)" }),
    after: Type.Optional(idSchema("lld", "only the changes recorded after those of this load: the loadId of the last change received, a load")),
  },
  { additionalProperties: false },
);

export function labelHistoryRoutes(deps: Deps): FastifyPluginAsyncTypebox {
  return async (app) => {
    // risk:write, as reading the labels themselves (risk-labels.ts says why).
    app.get(
      "/risk/labels/:address/history",
      {
        config: { scope: "risk:write" },
        schema: {
          tags: ["risk"],
          summary: "The history of an address's labels: each change, the load it came in, who made it and when, oldest first",
          description: DESCRIPTION,
          params: Type.Object({ address: AddressSchema }),
          querystring: LabelHistoryQuery,
          response: { 200: described(LabelHistorySchema, "the address's label changes, oldest first, one page"), ...errorResponses(400) },
        },
      },
      async (request) => {
        const { address } = request.params;
        assertAddress("params.address", address);
        const limit = parseQueryInteger("limit", request.query.limit, LABEL_HISTORY_LIMIT);
        const page = await labelHistory(deps.sql, address, { limit, after: request.query.after });
        if (!page) throw invalid("query.after", `must be the loadId of a load that changed a label of ${address}`);
        return { changes: page.rows, hasMore: page.hasMore };
      },
    );
  };
}
