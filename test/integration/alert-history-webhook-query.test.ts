// A webhook URL's query often carries the receiver's token, and an owner replaces a token that
// leaked: the alert's history (alert_changes, kept for good, after the alert's deletion too) keeps
// each URL as scheme, host, port and path with `?…` where a query was, never the token, while a
// rotation still shows as an entry (privacy review, finding 2). Through the real API and PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { track } from "../helpers/pipeline.ts";
import { bearer } from "../helpers/seed.ts";

let t: TestApp;
let alice: string;

beforeAll(async () => {
  t = await startTestApp("alert-history-webhook-query");
  alice = await t.token("alice");
});
afterAll(async () => {
  await t?.close();
});

type Change = { action: string; changes: Record<string, [unknown, unknown]> };

const TOKENS = ["TOKEN-A-1f3e", "TOKEN-B-9c2d", "TOKEN-C-77aa"] as const;
const hook = (path: string, token: string) => `http://127.0.0.1:9/${path}?token=${token}#part`;

async function call(method: "GET" | "POST" | "PATCH" | "DELETE", url: string, payload?: object): Promise<{ status: number; body: string }> {
  const res = await t.app.inject({ method, url, headers: bearer(alice), ...(payload ? { payload } : {}) });
  expect(res.statusCode, `${method} ${url}: ${res.body}`).toBeLessThan(300);
  return { status: res.statusCode, body: res.body };
}

/** The history as served, the text of the answer and of the rows stored. */
async function historyOf(alertId: string): Promise<{ entries: Change[]; served: string; stored: string }> {
  const { body } = await call("GET", `/v1/risk/alerts/${alertId}/history`);
  const rows = await t.deps.sql`select changes::text from alert_changes where alert_id = ${alertId} order by id`;
  return { entries: (JSON.parse(body) as { history: Change[] }).history, served: body, stored: JSON.stringify(rows) };
}

function expectNoToken(text: string): void {
  for (const token of TOKENS) expect(text).not.toContain(token);
  expect(text).not.toContain("token=");
  expect(text).not.toContain("#part");
}

describe("a webhook URL in an alert's history", () => {
  it.each([
    ["its own DELETE", (alertId: string) => `/v1/risk/alerts/${alertId}`],
    ["its wallet's DELETE", (_alertId: string, walletId: string) => `/v1/wallets/${walletId}`],
  ])("is kept without its query through a rotation of its token, a new path and %s", async (_deletion, deleteUrl) => {
    const wallet = await track(t, alice);
    const created = await call("POST", "/v1/risk/alerts", {
      walletId: wallet.walletId,
      condition: "large_transfer",
      threshold: 10,
      notificationMethod: "webhook",
      webhookUrl: hook("first", TOKENS[0]),
    });
    const { alertId } = JSON.parse(created.body) as { alertId: string };
    await call("PATCH", `/v1/risk/alerts/${alertId}`, { webhookUrl: hook("first", TOKENS[1]) }); // the token rotated
    await call("PATCH", `/v1/risk/alerts/${alertId}`, { webhookUrl: hook("second", TOKENS[2]) }); // another path
    // The alert itself still shows its URL whole, for editing.
    expect(JSON.parse((await call("GET", `/v1/risk/alerts/${alertId}`)).body)).toMatchObject({ webhookUrl: hook("second", TOKENS[2]) });

    const live = await historyOf(alertId);
    expect(live.entries.map((entry) => [entry.action, entry.changes.webhookUrl])).toEqual([
      ["created", [null, "http://127.0.0.1:9/first?…#…"]],
      ["updated", ["http://127.0.0.1:9/first?…#…", "http://127.0.0.1:9/first?…#…"]],
      ["updated", ["http://127.0.0.1:9/first?…#…", "http://127.0.0.1:9/second?…#…"]],
    ]);
    expectNoToken(live.served);
    expectNoToken(live.stored);

    await call("DELETE", deleteUrl(alertId, wallet.walletId));
    const deleted = await historyOf(alertId);
    expect(deleted.entries.map((entry) => entry.action)).toEqual(["created", "updated", "updated", "deleted"]);
    expect(deleted.entries[3]!.changes.webhookUrl).toEqual(["http://127.0.0.1:9/second?…#…", null]);
    expectNoToken(deleted.served);
    expectNoToken(deleted.stored);
  });
});
