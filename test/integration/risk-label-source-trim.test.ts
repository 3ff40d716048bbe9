// A label's source names a list: "ofac " and "ofac" are one list, and a source of only spaces
// names none. PUT and DELETE trim it, and refuse a blank one naming the field
// (src/http/routes/risk-labels.ts).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { randomAddress } from "../helpers/chain.ts";
import { putLabels, settled } from "../helpers/pipeline.ts";
import { bearer, errorPaths, expectProblem } from "../helpers/seed.ts";

let t: TestApp;
let token: string;

beforeAll(async () => {
  t = await startTestApp("risk-label-source-trim");
  token = await t.token("operator");
});
afterAll(async () => {
  await t.close();
});

const remove = (payload: unknown) =>
  t.app.inject({ method: "DELETE", url: "/v1/risk/labels", headers: bearer(token), payload: payload as object });

const storedSources = async (address: string) =>
  (await t.deps.sql<{ source: string }[]>`select source from risk_labels where address = ${address} order by source`).map((r) => r.source);

describe("a label's source, trimmed", () => {
  it("stores `ofac ` as `ofac`: a later PUT of `ofac` replaces that label instead of adding a second", async () => {
    const address = randomAddress();
    expect((await putLabels(t, token, [{ address, category: "scam", score: 60, source: "ofac " }])).statusCode).toBe(200);
    expect((await putLabels(t, token, [{ address, category: "sanctioned", score: 100, source: "ofac" }])).statusCode).toBe(200);
    await settled(t);
    expect(await storedSources(address)).toEqual(["ofac"]);
    const read = (await t.app.inject({ url: `/v1/risk/labels/${address}`, headers: bearer(token) })).json();
    expect(read.labels.map((l: { source: string; category: string }) => [l.source, l.category])).toEqual([["ofac", "sanctioned"]]);
  });

  it("removes the label of `ofac-sdn` with a DELETE naming ` ofac-sdn `, and leaves another list's", async () => {
    const address = randomAddress();
    await putLabels(t, token, [
      { address, category: "sanctioned", score: 100, source: "ofac-sdn" },
      { address, category: "mixer", score: 70, source: "vendor-x" },
    ]);
    const res = await remove({ addresses: [address], source: " ofac-sdn " });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ removed: 1, loadId: expect.stringMatching(/^lld_/) });
    await settled(t);
    expect(await storedSources(address)).toEqual(["vendor-x"]);
  });

  it("refuses one address under `ofac` and `ofac ` in one PUT as the same source given twice", async () => {
    const address = randomAddress();
    const res = await putLabels(t, token, [
      { address, category: "scam", score: 60, source: "ofac" },
      { address, category: "mixer", score: 60, source: "ofac " },
    ]);
    expect(errorPaths(expectProblem(res, 400, "validation_failed"))).toEqual(["body.labels.1.address"]);
    expect(await storedSources(address)).toEqual([]);
  });

  it.each(["   ", "\t"])("refuses a PUT source of only spaces (%j) with 400 naming it, and stores nothing", async (blank) => {
    const address = randomAddress();
    const res = await putLabels(t, token, [
      { address: randomAddress(), category: "scam", score: 60, source: "vendor-x" },
      { address, category: "scam", score: 60, source: blank },
    ]);
    const body = expectProblem(res, 400, "validation_failed");
    expect(body.errors).toEqual([
      { path: "body.labels.1.source", message: "must name the list the label comes from, not only spaces (null or absent for none)" },
    ]);
    expect(await storedSources(address)).toEqual([]);
  });

  it("refuses a DELETE source of only spaces with 400 naming it, and removes nothing", async () => {
    const address = randomAddress();
    await putLabels(t, token, [{ address, category: "scam", score: 60 }]);
    const body = expectProblem(await remove({ addresses: [address], source: "  " }), 400, "validation_failed");
    expect(errorPaths(body)).toEqual(["body.source"]);
    expect(await storedSources(address)).toEqual([""]);
  });
});
