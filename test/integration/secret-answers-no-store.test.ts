// An answer that holds a webhook secret says Cache-Control: no-store, so that no cache on the
// way (a corporate proxy, a CDN in front of the API) nor the client's own keeps the secret: an
// alert create's 201 and its replays under an Idempotency-Key, and a secret rotation's 200.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { auth, insertWallet } from "../helpers/alert-fixtures.ts";

let t: TestApp;
let headers: Record<string, string>;
let walletId: string;

beforeAll(async () => {
  t = await startTestApp("secret-answers-no-store");
  headers = auth(await t.token("keeper"));
  ({ walletId } = await insertWallet(t, "keeper"));
});
afterAll(async () => {
  await t.close();
});

const webhookAlert = { condition: "unusual_activity", notificationMethod: "webhook", webhookUrl: "http://127.0.0.1:9/hook" };
const create = (key?: string) =>
  t.app.inject({
    method: "POST",
    url: "/v1/risk/alerts",
    headers: { ...headers, ...(key === undefined ? {} : { "idempotency-key": key }) },
    payload: { walletId, ...webhookAlert },
  });

describe("Cache-Control: no-store on answers that hold a webhook secret", () => {
  it("is on an alert create's 201, and on its replay under the same Idempotency-Key", async () => {
    const first = await create("no-store-1");
    expect(first.statusCode, first.body).toBe(201);
    expect(first.json().webhookSecret).toMatch(/^whsec_/);
    expect(first.headers["cache-control"]).toBe("no-store");
    const replay = await create("no-store-1");
    expect(replay.headers["idempotent-replayed"]).toBe("true");
    expect(replay.json().webhookSecret).toBe(first.json().webhookSecret);
    expect(replay.headers["cache-control"]).toBe("no-store");
  });

  it("is on a secret rotation's 200", async () => {
    const { alertId } = (await create()).json();
    const rotated = await t.app.inject({ method: "POST", url: `/v1/risk/alerts/${alertId}/rotate-secret`, headers });
    expect(rotated.statusCode, rotated.body).toBe(200);
    expect(rotated.json().webhookSecret).toMatch(/^whsec_/);
    expect(rotated.headers["cache-control"]).toBe("no-store");
  });

  it("is documented on both answers, as a header always sent", async () => {
    const document = (await t.app.inject({ url: "/v1/openapi.json" })).json();
    const created = document.paths["/v1/risk/alerts"].post.responses["201"].headers["cache-control"];
    const rotated = document.paths["/v1/risk/alerts/{alertId}/rotate-secret"].post.responses["200"].headers["cache-control"];
    for (const header of [created, rotated]) expect(header).toMatchObject({ required: true, description: expect.stringMatching(/^no-store/) });
  });
});
