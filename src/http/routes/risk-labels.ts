// PUT /v1/risk/labels: operators load counterparty labels (OFAC, their vendors' lists). A
// label that changes rescores every tracked address that ever dealt with the labelled address; the
// rises are evaluated against risk_score_increase alerts by the risk workers.
import { Type, type FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { Deps } from "../../deps.ts";
import { LABEL_CATEGORIES } from "../../domain/types.ts";
import { applyLabels } from "../../pipeline/relabel.ts";
import { INGEST_BODY_LIMIT } from "../app.ts";
import { invalid } from "../problem.ts";
import { AddressSchema, assertAddress, errorResponses, textSchema } from "../schemas.ts";

export const MAX_LABELS = 10_000;

const LabelSchema = Type.Object(
  {
    address: AddressSchema,
    category: Type.Enum(LABEL_CATEGORIES, { description: "what the address is" }),
    score: Type.Integer({ minimum: 0, maximum: 100, description: "how risky the address is, 0–100" }),
    source: Type.Optional(textSchema({ minLength: 1, maxLength: 200, description: "where the label comes from, e.g. ofac-sdn" })),
  },
  { additionalProperties: false },
);

const LabelsBodySchema = Type.Object(
  { labels: Type.Array(LabelSchema, { minItems: 1, maxItems: MAX_LABELS }) },
  { additionalProperties: false },
);

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
          response: { 200: LabelsUpsertedSchema, ...errorResponses(400, 413, 415) },
        },
      },
      async (request) => {
        const seen = new Set<string>();
        const labels = request.body.labels.map((label, i) => {
          const path = `body.labels.${i}.address`;
          assertAddress(path, label.address);
          if (seen.has(label.address)) throw invalid(path, "appears more than once in the request");
          seen.add(label.address);
          return { address: label.address, category: label.category, score: label.score, source: label.source ?? null };
        });
        const { upserted } = await applyLabels(deps, labels);
        return { upserted };
      },
    );
  };
}
