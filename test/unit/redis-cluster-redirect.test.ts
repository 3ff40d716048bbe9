// A Redis Cluster node's MOVED or ASK, which the standalone client cannot follow: a setting to
// change (REDIS_URL leads to a cluster, which the service does not support), not an outage and
// not a 500.
import { describe, expect, it } from "vitest";
import { describeRefusal, isUnavailableError, misconfiguredSetting } from "../../src/dependency-errors.ts";

const replyError = (message: string) => Object.assign(new Error(message), { name: "ReplyError", command: { name: "exists", args: ["{wallet-alerts}:x"] } });

describe("a Redis Cluster node's redirect", () => {
  it.each([
    ["MOVED 1663 127.0.0.1:4645", "MOVED"],
    ["ASK 1663 10.0.0.7:6379", "ASK"],
  ])("names REDIS_URL for %s and says that Redis Cluster is not supported", (message, code) => {
    const refused = misconfiguredSetting(replyError(message));
    expect(refused).toMatchObject({ setting: "REDIS_URL", service: "Redis", code });
    expect(describeRefusal(refused!)).toBe(
      `Redis refused a command: ${message} (REDIS_URL leads to a node of a Redis Cluster, which this service does not support: ` +
        "point it at a standalone Redis (a primary, or an endpoint that follows its failover))",
    );
  });

  it("makes a request that met it a 503, as any refusal of REDIS_URL, and is not read into other services' words", () => {
    expect(isUnavailableError(replyError("MOVED 1663 127.0.0.1:4645"))).toBe(true);
    expect(misconfiguredSetting(new Error("webhook answered 301 MOVED PERMANENTLY"))).toBeUndefined();
    expect(misconfiguredSetting(new Error("the receiver has MOVED 2 times"))).toBeUndefined();
  });
});
