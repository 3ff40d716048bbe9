// The error handler's words for ajv's type, format, minItems and maxItems issues, and for an
// empty value that also fails a pattern, checked on the issues a real ajv reports (with the
// options the API gives it, app.ts) for schemas of the shapes the routes use. Before, a 400
// passed ajv's own words on: 'must match format "date-time"' (for a time without a zone, which
// ISO 8601 allows), "must NOT have fewer than 1 items", "must be array,null".
import { Ajv } from "ajv";
import addFormats from "ajv-formats";
import { describe, expect, it } from "vitest";
import { validationErrors } from "../../src/http/error-handler.ts";

const ajv = new Ajv({ coerceTypes: false, removeAdditional: false, allErrors: true, verbose: true });
(addFormats as unknown as (ajv: Ajv) => void)(ajv);

const check = ajv.compile({
  type: "object",
  additionalProperties: false,
  properties: {
    since: { type: "string", format: "date-time" },
    until: { anyOf: [{ type: "string", format: "date-time" }, { type: "null" }] },
    transfers: { type: ["array", "null"], maxItems: 3 },
    batch: { type: "array", minItems: 1, maxItems: 1000 },
    some: { type: "array", minItems: 2 },
    pair: { type: "array", minItems: 2, maxItems: 2 },
    key: { type: "string", minLength: 1, pattern: "^[\\x21-\\x7e]+$", description: "a key of visible ASCII characters" },
    count: { type: "integer" },
  },
});

/** The 400's lines ("path message") for a body. */
function lines(body: unknown): string[] {
  expect(check(body)).toBe(false);
  return validationErrors(check.errors as never, "body").map((e) => `${e.path} ${e.message}`);
}

describe("the service's words for ajv's", () => {
  it.each([
    [{ since: "2026-11-01T00:00:00" }, "body.since must be a date-time with a time zone (such as 2026-11-20T00:00:00Z)"],
    [{ since: "yesterday" }, "body.since must be a date-time with a time zone (such as 2026-11-20T00:00:00Z)"],
    [{ until: "2026-11-01" }, "body.until must be a date-time with a time zone (such as 2026-11-20T00:00:00Z) or null"],
    [{ transfers: "x" }, "body.transfers must be an array or null"],
    [{ transfers: [1, 2, 3, 4] }, "body.transfers must list at most 3 items"],
    [{ batch: [] }, "body.batch must list 1 to 1000 items"],
    [{ some: [1] }, "body.some must list at least 2 items"],
    [{ pair: [1, 2, 3] }, "body.pair must list exactly 2 items"],
    [{ batch: {} }, "body.batch must be an array"],
    [{ count: 1.5 }, "body.count must be a whole number"],
    [{ key: 5 }, "body.key must be a string"],
    [[], "body must be an object"],
  ])("%j", (body, line) => {
    expect(lines(body)).toEqual([line]);
  });

  it("says an empty value is empty once, not also that it does not match the field's pattern", () => {
    expect(lines({ key: "" })).toEqual(["body.key must not be empty"]);
    // Not empty, only wrong: the pattern says what is wanted.
    expect(lines({ key: "a b" })).toEqual(["body.key must be a key of visible ASCII characters"]);
  });
});
