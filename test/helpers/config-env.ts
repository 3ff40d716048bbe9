// The environment a config test starts from, and what loadConfig says about a bad one.
import { expect } from "vitest";
import { ConfigError, loadConfig } from "../../src/config.ts";

/** The settings loadConfig requires, valid. */
export const REQUIRED = {
  DATABASE_URL: "postgres://postgres@127.0.0.1:5432/wallet_alerts",
  REDIS_URL: "redis://127.0.0.1:6379",
  JWT_SECRET: "a".repeat(32),
};

/** The message of the ConfigError that REQUIRED plus `env` gets (the test fails if none). */
export const problemsOf = (env: Record<string, string>): string => {
  try {
    loadConfig({ ...REQUIRED, ...env });
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error("expected a ConfigError");
};
