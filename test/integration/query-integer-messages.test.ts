// A query integer that is not a whole number (limit=abc) and one out of range (limit=101) are
// refused in the same words, those of the README's example: "must be a whole number from 1 to
// 100". limit=abc used to read "must be results per page: a whole number from 1 to 100
// (default 25)", the parameter's description. The parameters are read from the OpenAPI
// document: each integer with its bounds, on the operations that need nothing else.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import type { OpenApiDocument, Parameter } from "../helpers/openapi-contract.ts";

let t: TestApp;
let token: string;
let document: OpenApiDocument;

beforeAll(async () => {
  t = await startTestApp("query-integer-messages");
  token = await t.token("alice");
  document = (await t.app.inject({ url: "/v1/openapi.json" })).json<OpenApiDocument>();
});
afterAll(async () => {
  await t.close();
});

type Problem = { detail: string; errors: { path: string; message: string }[] };

async function refusal(path: string, query: string): Promise<Problem> {
  const res = await t.app.inject({ method: "GET", url: `${path}?${query}`, headers: { authorization: `Bearer ${token}` } });
  expect(res.statusCode, res.body).toBe(400);
  return res.json<Problem>();
}

describe("a query integer refused", () => {
  it("says the same whether it is not a whole number or out of range", async () => {
    const integers = Object.entries(document.paths).flatMap(([path, operations]) => {
      const parameters: Parameter[] = operations.get?.parameters ?? [];
      if (path.includes("{") || parameters.some((parameter) => parameter.required)) return [];
      return parameters
        .filter((parameter) => parameter.in === "query" && parameter.schema?.type === "integer")
        .map((parameter) => ({ path, name: parameter.name, min: parameter.schema!.minimum as number, max: parameter.schema!.maximum as number }));
    });
    expect(integers.length).toBeGreaterThanOrEqual(4);
    for (const { path, name, min, max } of integers) {
      const expected = { path: `query.${name}`, message: `must be a whole number from ${min} to ${max}` };
      for (const value of ["abc", "1.5", String(max + 1)]) {
        const problem = await refusal(path, `${name}=${value}`);
        expect(problem.errors, `${path}?${name}=${value}`).toEqual([expected]);
        expect(problem.detail).toBe(`${expected.path} ${expected.message}`);
      }
    }
  });
});
