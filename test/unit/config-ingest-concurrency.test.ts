// INGEST_CONCURRENCY: how many ingest requests one API process stores at once (ingest-admission.ts).
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.ts";
import { REQUIRED, problemsOf } from "../helpers/config-env.ts";

describe("INGEST_CONCURRENCY", () => {
  it("is unset by default (the admission then leaves two pool connections to reads)", () => {
    expect(loadConfig({ ...REQUIRED }).ingestConcurrency).toBeUndefined();
  });

  it("takes a whole number below DATABASE_POOL_SIZE", () => {
    expect(loadConfig({ ...REQUIRED, INGEST_CONCURRENCY: "4" }).ingestConcurrency).toBe(4);
    expect(loadConfig({ ...REQUIRED, DATABASE_POOL_SIZE: "2", INGEST_CONCURRENCY: "1" }).ingestConcurrency).toBe(1);
  });

  it("refuses 0, a fraction and a word, naming the setting", () => {
    for (const value of ["0", "2.5", "many", "-1"]) {
      expect(problemsOf({ INGEST_CONCURRENCY: value })).toBe("invalid configuration: INGEST_CONCURRENCY: expected a whole number from 1 to 999");
    }
  });

  it("refuses a value that would let ingest hold every connection of the pool", () => {
    expect(problemsOf({ INGEST_CONCURRENCY: "10" })).toBe(
      "invalid configuration: INGEST_CONCURRENCY (10) must be below DATABASE_POOL_SIZE (10): ingest would hold every connection and leave reads none; lower it or raise DATABASE_POOL_SIZE",
    );
    expect(problemsOf({ DATABASE_POOL_SIZE: "4", INGEST_CONCURRENCY: "6" })).toContain("INGEST_CONCURRENCY (6) must be below DATABASE_POOL_SIZE (4)");
  });
});
