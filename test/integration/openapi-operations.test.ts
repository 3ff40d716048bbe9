// A client generated from /v1/openapi.json names its methods after each operation's
// operationId, and learns from its security which scope a token needs for it. Every operation
// has an id of its own, and the scope the document names is the one the route enforces: the
// expectation is read from the app's answers (a token with every other scope is refused with
// insufficient_scope naming that scope; one with just that scope, or admin, is not), never
// from a list kept here that could drift from the routes.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ALL_SCOPES, startTestApp, type TestApp } from "../helpers/app.ts";

type Operation = { operationId?: string; security?: Record<string, string[]>[] };
type Document = { paths: Record<string, Record<string, Operation>> };

let t: TestApp;
let operations: { key: string; method: string; path: string; operation: Operation }[];

beforeAll(async () => {
  t = await startTestApp("openapi-operations");
  const document = (await t.app.inject({ url: "/v1/openapi.json" })).json<Document>();
  operations = Object.entries(document.paths).flatMap(([path, byMethod]) =>
    Object.entries(byMethod).map(([method, operation]) => ({ key: `${method.toUpperCase()} ${path}`, method: method.toUpperCase(), path, operation })),
  );
});
afterAll(async () => {
  await t.close();
});

/** The scope an operation's security names: [{ bearer: [scope] }, { bearer: ["admin"] }]. */
function documentedScope(operation: Operation): string | undefined {
  const scopes = (operation.security ?? []).map((requirement) => requirement.bearer ?? []);
  const named = scopes.flat().filter((scope) => scope !== "admin");
  return named.length === 1 ? named[0] : undefined;
}

/** The scope the app asks for when `scopes` are all the token has, or undefined when it asks for none. */
async function scopeRefused(method: string, path: string, scopes: string): Promise<string | undefined> {
  const token = await t.token("scope-prober", scopes);
  const res = await t.app.inject({
    method: method as "GET",
    url: path.replace(/\{[^}]+\}/g, "x"),
    headers: { authorization: `Bearer ${token}` },
  });
  const challenge = String(res.headers["www-authenticate"] ?? "");
  if (res.statusCode !== 403 || !challenge.includes("insufficient_scope")) return undefined;
  return /scope="([^"]+)"/.exec(challenge)?.[1];
}

describe("the operations of the OpenAPI document", () => {
  it("each have an operationId of their own, readable as a method name", () => {
    expect(operations.length).toBeGreaterThan(10);
    const ids = operations.map(({ operation }) => operation.operationId);
    expect(operations.filter(({ operation }) => !/^[a-z]+[A-Za-z]*$/.test(operation.operationId ?? "")).map(({ key }) => key)).toEqual([]);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("name in their security the scope that the route enforces, or admin in its place", async () => {
    const mismatches: string[] = [];
    const tokenRoutes = operations.filter(({ operation }) => operation.security?.some((requirement) => "bearer" in requirement) !== false);
    expect(tokenRoutes.length).toBeGreaterThan(10);
    for (const { key, method, path, operation } of tokenRoutes) {
      const documented = documentedScope(operation);
      expect(operation.security, key).toEqual([{ bearer: [documented] }, { bearer: ["admin"] }]);
      const allBut = ALL_SCOPES.split(" ").filter((scope) => scope !== documented).join(" ");
      const enforced = await scopeRefused(method, path, allBut);
      if (enforced !== documented) mismatches.push(`${key}: documented ${documented}, refused without it: ${enforced ?? "no"}`);
      for (const enough of [documented!, "admin"]) {
        const refused = await scopeRefused(method, path, enough);
        if (refused !== undefined) mismatches.push(`${key}: refused with only ${enough}, for want of ${refused}`);
      }
    }
    expect(mismatches).toEqual([]);
  });
});
