// Which of Redis's answers readiness takes for "refuses writes" (dependency-errors.ts
// redisWriteRefusal): the answers to a write that Redis gives while it answers a PING. Redis 7's
// own words, as ioredis reports them.
import { describe, expect, it } from "vitest";
import { redisWriteRefusal } from "../../src/dependency-errors.ts";

const replyError = (message: string) => Object.assign(new Error(message), { name: "ReplyError", command: { name: "set", args: [] } });

describe("a Redis that refuses writes, for readiness", () => {
  it.each([
    ["OOM command not allowed when used memory > 'maxmemory'.", "OOM", "full at maxmemory"],
    ["READONLY You can't write against a read only replica.", "READONLY", "a read-only replica"],
    ["MISCONF Errors writing to the AOF file: No space left on device", "MISCONF", "unable to persist to disk"],
    ["NOREPLICAS Not enough good replicas to write.", "NOREPLICAS", "too few replicas in reach"],
  ])("reads %s as %s", (message, code, meaning) => {
    expect(redisWriteRefusal(replyError(message))).toEqual({ code, meaning, message });
  });

  it("takes neither another reply, nor the same words from outside the Redis client, for a refusal of writes", () => {
    expect(redisWriteRefusal(replyError("LOADING Redis is loading the dataset in memory"))).toBeUndefined();
    expect(redisWriteRefusal(replyError("NOPERM User app has no permissions to run the 'set' command"))).toBeUndefined();
    expect(redisWriteRefusal(new Error("OOM command not allowed when used memory > 'maxmemory'."))).toBeUndefined();
    expect(redisWriteRefusal(Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:6379"), { code: "ECONNREFUSED" }))).toBeUndefined();
  });
});
