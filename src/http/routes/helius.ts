// POST /v1/ingest/helius — Helius enhanced-transaction webhooks, fed into the same path as
// POST /v1/ingest/transactions. Helius cannot send a JWT: it echoes the authHeader set on the
// webhook in `Authorization`, which we compare with HELIUS_AUTH_HEADER in constant time, and with
// HELIUS_AUTH_HEADER_PREVIOUS when set. Helius sends one value and changes it at once, and
// drops a delivery after three refused retries: during a rotation every process must take both,
// whichever Helius sends and whichever processes have been restarted.
//
// A delivery is judged item by item (src/ingest/helius-triage.ts): Helius retries a non-2xx
// answer three times and then drops the delivery for good, so one item we cannot read must not
// cost the others. The valid items are stored; the refused ones are kept whole in
// helius_rejected_items, listed in the 202's `rejected` and logged, for an operator to fix and
// post again; one that gives a key twice is kept as sent (helius-repeated-keys.ts). Only what
// is not a delivery at all (not an array of 1–1000 objects, over 10 MiB, without the secret, a
// `__proto__` or `constructor.prototype` key anywhere in it: json-body.ts) is refused whole. A delivery stores at most MAX_MOVEMENTS_PER_DELIVERY movements: the items
// past them are refused unread, and kept, like the others refused (helius-triage.ts says why).
import { createHash, timingSafeEqual } from "node:crypto";
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { keepRefusedHeliusItems } from "../../db/queries/helius-rejected-items.ts";
import type { Deps } from "../../deps.ts";
import { inexactHeliusNumbers } from "../../ingest/exact-token-amounts.ts";
import { mapHeliusWebhook } from "../../ingest/helius.ts";
import { MAX_MOVEMENTS_PER_DELIVERY, triageHeliusItems, type RefusedItem } from "../../ingest/helius-triage.ts";
import { storeTransactionBatch } from "../../ingest/store.ts";
import { HELIUS_AUTH_SCHEME, INGEST_BODY_LIMIT } from "../app.ts";
import { validationErrors } from "../error-handler.ts";
import { ProblemError } from "../problem.ts";
import { keepRawBody, rawBody } from "../raw-body.ts";
import { described, problemResponses } from "../schemas.ts";
import { repeatedHeliusKeys } from "./helius-repeated-keys.ts";
import { AcceptedSchema, DeliverySchema, HeliusItemSchema } from "./helius-schemas.ts";

/**
 * Equal-length digests, so neither the content nor the length of a secret leaks by timing; every
 * accepted value is compared (map, not some), so which one matched does not either.
 */
function oneOfSecrets(given: string | undefined, accepted: readonly string[]): boolean {
  if (given === undefined) return false;
  const digest = (value: string) => createHash("sha256").update(value).digest();
  const givenDigest = digest(given);
  return accepted.map((value) => timingSafeEqual(givenDigest, digest(value))).includes(true);
}

/** ajv's errors, as the error handler reads them for every other 400. */
type AjvIssues = Parameters<typeof validationErrors>[0];

// An if/then/else (tokenAmount) reports the failing branch's own error, then an `if` error
// that only says a branch failed: the first is the one worth reading.
const withoutSummaries = (errors: readonly { keyword: string }[]) => errors.filter((e) => e.keyword !== "if") as AjvIssues;

const asRejected = ({ index, signature, errors }: RefusedItem) => ({ index, ...(signature ? { signature } : {}), errors });

export function heliusRoutes(deps: Deps): FastifyPluginAsyncTypebox {
  return async (app) => {
    const { heliusAuthHeader, previousHeliusAuthHeader } = deps.config;
    // Said at start (never the value), so that a rotation's previous value is not left in force once it is done.
    if (heliusAuthHeader && previousHeliusAuthHeader) {
      deps.logger.info("HELIUS_AUTH_HEADER_PREVIOUS is set: Helius deliveries are accepted with it as well as with HELIUS_AUTH_HEADER; unset it once the webhook sends the new value");
    }
    const accepted = [heliusAuthHeader, previousHeliusAuthHeader].filter((value) => value !== undefined);
    app.post(
      "/ingest/helius",
      {
        bodyLimit: INGEST_BODY_LIMIT,
        config: { public: true },
        // Before the body is parsed: a caller without the secret learns nothing about its body.
        onRequest: async (request) => {
          if (!heliusAuthHeader) {
            throw new ProblemError("not_found", "the Helius webhook is not enabled here (HELIUS_AUTH_HEADER is not set)");
          }
          if (!oneOfSecrets(request.headers.authorization, accepted)) {
            throw new ProblemError("unauthorized", "the Authorization header does not match the webhook's auth header", {
              headers: { "www-authenticate": 'HeliusAuthHeader realm="wallet-alerts"' },
            });
          }
        },
        // The body's bytes as received, for the handler to read the amount and fee literals
        // JSON.parse rounds (the byte search costs a few milliseconds for a 10 MiB delivery; the
        // full scan only runs when an inexact literal may be there).
        preParsing: keepRawBody,
        schema: {
          tags: ["ingest"],
          summary: "Ingest a Helius enhanced-transaction webhook delivery (idempotent by signature)",
          description:
            "Authenticated by the webhook's auth header (`Authorization` equal to HELIUS_AUTH_HEADER, or to " +
            "HELIUS_AUTH_HEADER_PREVIOUS during a rotation), not by a JWT. " +
            "Each item is checked on its own: the valid ones are stored, the others listed in `rejected` and kept " +
            "for an operator, and the delivery is answered 202 all the same (a 4xx would make Helius drop all of it). " +
            "Unknown fields inside the items are ignored; the fields read are typed strictly, and one given twice in an " +
            "item refuses that item. A delivery stores at most " +
            `${MAX_MOVEMENTS_PER_DELIVERY} movements (native transfers, token transfers, compressed-NFT events; an item ` +
            "with none counts 1): the items past them are refused unread, listed in `rejected` and kept, to be posted " +
            "again in smaller deliveries. A body that is not an array of 1–1000 objects, or that holds a `__proto__` or " +
            "`constructor.prototype` key anywhere, is a 400.",
          // Not the bearer: the webhook's own scheme (config.public skips the token check).
          security: [{ [HELIUS_AUTH_SCHEME]: [] }],
          body: DeliverySchema,
          response: {
            202: described(AcceptedSchema, "the valid items stored (or already stored) and queued for evaluation; the others listed in rejected"),
            ...problemResponses(400, 401, 404, 413, 415, 500, 503),
          },
        },
      },
      async (request, reply) => {
        const items = request.body;
        const body = rawBody(request);
        // The app's own ajv (its options, its messages), compiled once per route.
        const checkItem = request.compileValidationSchema(HeliusItemSchema, "body");
        const repeats = repeatedHeliusKeys(body, items);
        const { valid, refused: triaged, unread } = triageHeliusItems(
          items,
          (item, at, index) => {
            // Its value holds only the last of a key given twice: nothing else of it is judged.
            const repeated = repeats.get(index)?.errors ?? [];
            if (repeated.length > 0) return repeated;
            return checkItem(item) ? [] : validationErrors(withoutSummaries(checkItem.errors ?? []), at);
          },
          deps.now(),
          inexactHeliusNumbers(body),
        );
        // An item that gives a key twice, refused for it or not, is kept as sent: both values.
        const refused = triaged.map((r) => (repeats.has(r.index) ? { ...r, sent: repeats.get(r.index)!.text } : r));
        // The refused items are kept first: should storing the valid ones fail after their rows
        // were written (Redis refusing the evaluation job: 503, the reconciler enqueues it later),
        // Helius may give up retrying, and the refused items must be on record all the same.
        if (refused.length > 0) {
          const kept = await keepRefusedHeliusItems(deps.sql, refused);
          request.log.warn(
            {
              refused: refused.length,
              items: items.length,
              newlyKept: kept,
              signatures: refused.flatMap((r) => (r.signature ? [r.signature] : [])),
              ...(unread > 0 ? { unread, maxMovements: MAX_MOVEMENTS_PER_DELIVERY } : {}),
            },
            `helius: refused ${refused.length} of ${items.length} items of a delivery; kept in helius_rejected_items` +
              (unread > 0 ? ` (${unread} of them unread, past the ${MAX_MOVEMENTS_PER_DELIVERY} movements a delivery stores: post them again in smaller deliveries)` : ""),
          );
        }
        const { transactions, skipped } = mapHeliusWebhook(valid);
        const { accepted, duplicates } = await storeTransactionBatch(deps, transactions);
        return reply.code(202).send({ accepted, duplicates, skipped, rejected: refused.map(asRejected) });
      },
    );
  };
}
