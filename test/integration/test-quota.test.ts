// The hourly quota of test notifications against a real Redis: counted per caller and per
// clock hour, refused past the limit with the seconds to the next hour, and off at 0.
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ProblemError } from "../../src/http/problem.ts";
import { takeTestQuota } from "../../src/http/routes/test-quota.ts";
import { uniqueQueuePrefix } from "../helpers/db.ts";
import { TEST_REDIS_URL } from "../helpers/env.ts";
import { deletePrefixKeys } from "../helpers/redis-keys.ts";

const prefix = uniqueQueuePrefix("test-quota");
let redis: Redis;
beforeAll(() => {
  redis = new Redis(TEST_REDIS_URL);
});
afterAll(async () => {
  await deletePrefixKeys(redis, prefix);
  redis.disconnect();
});

const refusal = async (work: Promise<void>): Promise<ProblemError> => {
  const error = await work.then(
    () => undefined,
    (failure: unknown) => failure,
  );
  expect(error).toBeInstanceOf(ProblemError);
  return error as ProblemError;
};

describe("takeTestQuota", () => {
  const at = (iso: string) => new Date(iso);

  it("allows perHour tests per caller in a clock hour, then answers 429 with the seconds to the next hour", async () => {
    await takeTestQuota(redis, prefix, "erin", 2, at("2026-11-21T10:00:00Z"));
    await takeTestQuota(redis, prefix, "erin", 2, at("2026-11-21T10:30:00Z"));
    const refused = await refusal(takeTestQuota(redis, prefix, "erin", 2, at("2026-11-21T10:59:00Z")));
    expect(refused.code).toBe("rate_limited");
    // With the quota's RateLimit-* (not the per-minute limiter's, which this request did not exceed).
    expect(refused.headers).toEqual({ "retry-after": "60", "ratelimit-limit": "2", "ratelimit-remaining": "0", "ratelimit-reset": "60" });
    // Another caller has a quota of its own; the next hour starts afresh.
    await takeTestQuota(redis, prefix, "frank", 2, at("2026-11-21T10:59:00Z"));
    await takeTestQuota(redis, prefix, "erin", 2, at("2026-11-21T11:00:00Z"));
  });

  it("refuses every test when the quota is 0, without counting", async () => {
    const refused = await refusal(takeTestQuota(redis, prefix, "gina", 0, at("2026-11-21T10:00:00Z")));
    expect(refused.code).toBe("forbidden");
    expect(await redis.keys(`${prefix}:test-quota:*:gina`)).toEqual([]);
  });

  it("expires a caller's counter within the hour", async () => {
    const now = at("2026-11-21T12:10:00Z");
    await takeTestQuota(redis, prefix, "hal", 5, now);
    const ttl = await redis.ttl(`${prefix}:test-quota:${Math.floor(now.getTime() / 3_600_000)}:hal`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(3600);
  });
});
