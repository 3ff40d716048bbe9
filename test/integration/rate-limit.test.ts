// RATE_LIMIT_PER_MINUTE is per caller and shared by every API process through Redis.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { uniqueQueuePrefix } from "../helpers/db.ts";
import { WINDOW_MS } from "../../src/http/rate-limit/window-counter.ts";
import { clockClearOfBoundary } from "../helpers/clock.ts";

let first: TestApp;
let second: TestApp;
beforeAll(async () => {
  // Two API instances over one Redis prefix, as two processes behind a load balancer.
  const shared = { RATE_LIMIT_PER_MINUTE: "5", QUEUE_PREFIX: uniqueQueuePrefix("rate-limit") };
  // Counts start afresh each minute: the file's requests must all fall in one.
  const now = clockClearOfBoundary(WINDOW_MS);
  [first, second] = await Promise.all([
    startTestApp("rate-limit-a", shared, { now }),
    startTestApp("rate-limit-b", shared, { now }),
  ]);
});
afterAll(async () => {
  await Promise.all([first.close(), second.close()]);
});

const get = async (t: TestApp, sub: string) =>
  t.app.inject({ url: "/v1/wallets", headers: { authorization: `Bearer ${await t.token(sub)}` } });

async function waitForSharedCount(t: TestApp, sub: string, expected: number): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (Date.now() < deadline) {
    const keys = await t.deps.redis.keys(`${t.config.queuePrefix}:rate-limit:*:${sub}`);
    const counts = await Promise.all(keys.map((key) => t.deps.redis.get(key)));
    if (counts.reduce((sum, c) => sum + Number(c), 0) >= expected) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`the shared count for ${sub} did not reach ${expected}`);
}

describe("rate limit", () => {
  it("counts a caller's requests across API processes and answers 429 problem+json with Retry-After past the limit", async () => {
    for (let i = 0; i < 3; i++) expect((await get(first, "alice")).statusCode).toBe(200);
    await waitForSharedCount(first, "alice", 3);
    // A process learns the others' counts in the reply to its own: within one sync interval
    // (100 ms) of traffic per process, the limit is shared.
    expect((await get(second, "alice")).statusCode).toBe(200);
    await waitForSharedCount(second, "alice", 4);
    await new Promise((r) => setTimeout(r, 250));
    const fifth = await get(second, "alice");
    expect(fifth.statusCode).toBe(200);
    expect(fifth.headers["ratelimit-limit"]).toBe("5");
    expect(fifth.headers["ratelimit-remaining"]).toBe("0");
    const refused = await get(second, "alice");
    expect(refused.statusCode).toBe(429);
    expect(refused.headers["content-type"]).toContain("application/problem+json");
    expect(Number(refused.headers["retry-after"])).toBeGreaterThan(0);
    expect(Number(refused.headers["retry-after"])).toBeLessThanOrEqual(60);
    expect(refused.json()).toMatchObject({ status: 429, code: "rate_limited" });
  });

  it("keeps other callers apart and does not count requests without a valid token", async () => {
    expect((await get(first, "bob")).statusCode).toBe(200);
    for (let i = 0; i < 10; i++) expect((await first.app.inject({ url: "/v1/wallets" })).statusCode).toBe(401);
    expect((await get(first, "bob")).headers["ratelimit-remaining"]).toBe("3");
  });
});
