// npm run migrate's settings: DATABASE_URL, and MIGRATION_LOCK_TIMEOUT, how long one of its
// statements waits for a table's lock while the service's other sessions queue behind it.
import { describe, expect, it } from "vitest";
import { loadMigrateSettings } from "../../src/config.ts";

const DATABASE_URL = "postgres://app@db:5432/wallet_alerts";

describe("loadMigrateSettings", () => {
  it("bounds a lock wait at 5 s when MIGRATION_LOCK_TIMEOUT is unset or empty", () => {
    expect(loadMigrateSettings({ DATABASE_URL })).toEqual({ databaseUrl: DATABASE_URL, lockTimeoutMs: 5_000 });
    expect(loadMigrateSettings({ DATABASE_URL, MIGRATION_LOCK_TIMEOUT: "" }).lockTimeoutMs).toBe(5_000);
  });

  it("takes a duration, and 0s for no bound", () => {
    expect(loadMigrateSettings({ DATABASE_URL, MIGRATION_LOCK_TIMEOUT: "250ms" }).lockTimeoutMs).toBe(250);
    expect(loadMigrateSettings({ DATABASE_URL, MIGRATION_LOCK_TIMEOUT: "0s" }).lockTimeoutMs).toBe(0);
  });

  it("refuses a value that is not a duration, or past 10 minutes, naming the setting", () => {
    expect(() => loadMigrateSettings({ DATABASE_URL, MIGRATION_LOCK_TIMEOUT: "5" })).toThrow(/^invalid configuration: MIGRATION_LOCK_TIMEOUT: /);
    expect(() => loadMigrateSettings({ DATABASE_URL, MIGRATION_LOCK_TIMEOUT: "11m" })).toThrow(
      "invalid configuration: MIGRATION_LOCK_TIMEOUT: expected a duration from 0s to 10m, such as 10s",
    );
  });

  it("still requires DATABASE_URL", () => {
    expect(() => loadMigrateSettings({ MIGRATION_LOCK_TIMEOUT: "1s" })).toThrow(/DATABASE_URL is required/);
  });
});
