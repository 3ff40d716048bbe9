// REDIS_URL's path is a database number, or nothing. ioredis sends SELECT <path> as it connects:
// `/abc` became `SELECT NaN`, refused by Redis with a ReplyError that crashed the API. A number the
// server does not have (past its `databases`) is found at connect (src/redis.ts).
import { describe, expect, it } from "vitest";
import { loadConfig, loadQueuesConfig } from "../../src/config.ts";
import { refusedDatabase } from "../../src/redis.ts";
import { REQUIRED, problemsOf } from "../helpers/config-env.ts";

describe("REDIS_URL's database", () => {
  const TAKEN = ["redis://127.0.0.1:6379", "redis://127.0.0.1:6379/", "redis://127.0.0.1:6379/0", "rediss://cache:6380/15", "redis://127.0.0.1:6379/?db=3"];

  it.each(["redis://127.0.0.1:6379/abc", "redis://127.0.0.1:6379/1/2", "redis://127.0.0.1:6379/-1", "redis://127.0.0.1:6379/%31"])(
    "refuses the path of %s, naming REDIS_URL, and takes a database number or no path",
    (url) => {
      expect(problemsOf({ REDIS_URL: url })).toBe(
        "invalid configuration: REDIS_URL: expected a database number as the path, such as redis://127.0.0.1:6379/0 (no path: database 0)",
      );
      expect(() => loadQueuesConfig({ REDIS_URL: url })).toThrow("REDIS_URL: expected a database number as the path");
      for (const taken of TAKEN) {
        expect(loadConfig({ ...REQUIRED, REDIS_URL: taken }).redisUrl).toBe(taken);
        expect(loadQueuesConfig({ REDIS_URL: taken }).redisUrl).toBe(taken);
      }
    },
  );

  it("refuses a ?db= that is not a number", () => {
    expect(problemsOf({ REDIS_URL: "redis://127.0.0.1:6379?db=two" })).toBe("invalid configuration: REDIS_URL: expected a database number in ?db=, such as ?db=0");
  });
});

describe("refusedDatabase: Redis's refusal of the SELECT sent at connect", () => {
  const replyError = (message: string, args: unknown[]) => Object.assign(new Error(message), { command: { name: "select", args } });

  it("names REDIS_URL and says what the number is past", () => {
    expect(refusedDatabase(replyError("ERR DB index is out of range", ["99"]))).toEqual({
      setting: "REDIS_URL",
      service: "Redis",
      code: "ERR",
      message: "ERR DB index is out of range (REDIS_URL asks for database 99, past the server's `databases` setting: 16 by default, numbered 0 to 15)",
    });
  });

  it("says that a Redis Cluster has database 0 only", () => {
    expect(refusedDatabase(replyError("ERR SELECT is not allowed in cluster mode", ["2"]))?.message).toBe(
      "ERR SELECT is not allowed in cluster mode (a Redis Cluster has database 0 only: remove the database number from REDIS_URL)",
    );
  });

  it("is not any other error, even in the same words from another command", () => {
    expect(refusedDatabase(new Error("connect ECONNREFUSED 127.0.0.1:6379"))).toBeUndefined();
    expect(refusedDatabase(Object.assign(new Error("ERR value is not an integer or out of range"), { command: { name: "incrby", args: ["k", "x"] } }))).toBeUndefined();
    expect(refusedDatabase(undefined)).toBeUndefined();
  });
});
