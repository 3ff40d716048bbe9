// A `%` in a password that is not a percent-escape (a generated password pasted as it is): the
// processes stop with one line naming the setting, never the password, and no stack trace. The
// WHATWG parser took such a URL; postgres.js and ioredis decode the password as they connect,
// and the API crashed there with an uncaught `URIError: URI malformed` (and a restart loop under
// compose), while `npm run migrate` said "migration failed: URI malformed".
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { testEnv } from "../helpers/app.ts";
import { exitWithin } from "../helpers/pipeline.ts";
import { freePort } from "../helpers/ports.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const PASSWORD = "ab%zz-generated";
/** Start-up (tsx, on two shared cores that other test runs may load heavily): the refusal itself is at once. */
const EXIT_BOUND_MS = 60_000;

async function run(script: string, env: Record<string, string>) {
  const child = spawn(process.execPath, ["--import", "tsx", script], {
    cwd: ROOT,
    env: {
      ...process.env,
      ...testEnv({ DATABASE_URL: "postgres://postgres@127.0.0.1:5432/postgres", LOG_LEVEL: "warn", PORT: String(await freePort()), HOST: "127.0.0.1", ...env }),
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const exit = await exitWithin(child, EXIT_BOUND_MS);
  return { exit, stdout, stderr };
}

const NOT_HEX = "the password has a % not followed by two hex digits: percent-encode it (a % is written %25)";

/** The one line the process wrote: a fatal log line (JSON on stdout, as its other lines), nothing on stderr. */
function onlyLine(outcome: { stdout: string; stderr: string }): { level: number; role: string; msg: string } {
  expect(outcome.stderr).toBe("");
  const lines = outcome.stdout.split("\n").filter((line) => line !== "");
  expect(lines).toHaveLength(1);
  return JSON.parse(lines[0]!) as { level: number; role: string; msg: string };
}

describe("a bad percent-escape in a connection URL's password", { timeout: EXIT_BOUND_MS + 30_000 }, () => {
  it("stops the API with one line naming DATABASE_URL", async () => {
    const outcome = await run("src/bin/api.ts", { DATABASE_URL: `postgres://postgres:${PASSWORD}@127.0.0.1:5432/wallet_alerts` });
    expect(outcome.exit).toEqual({ code: 1, signal: null });
    expect(onlyLine(outcome)).toMatchObject({ level: 60, role: "api", msg: `invalid configuration: DATABASE_URL: ${NOT_HEX}` });
  });

  it("stops the API with one line naming REDIS_URL", async () => {
    const outcome = await run("src/bin/api.ts", { REDIS_URL: `redis://:${PASSWORD}@127.0.0.1:6379` });
    expect(outcome.exit).toEqual({ code: 1, signal: null });
    expect(onlyLine(outcome)).toMatchObject({ level: 60, role: "api", msg: `invalid configuration: REDIS_URL: ${NOT_HEX}` });
    expect(outcome.stderr + outcome.stdout).not.toContain(PASSWORD);
  });

  it("stops npm run migrate with one line naming DATABASE_URL", async () => {
    const outcome = await run("src/bin/migrate.ts", { DATABASE_URL: `postgres://postgres:${PASSWORD}@127.0.0.1:5432/wallet_alerts` });
    expect(outcome.exit).toEqual({ code: 1, signal: null });
    expect(onlyLine(outcome)).toMatchObject({ level: 60, role: "migrate", msg: `invalid configuration: DATABASE_URL: ${NOT_HEX}` });
  });

  it("stops a worker with one line naming REDIS_URL when its path is not a database number (was SELECT NaN and a crash)", async () => {
    const outcome = await run("src/bin/worker.ts", { REDIS_URL: "redis://127.0.0.1:6379/abc" });
    expect(outcome.exit).toEqual({ code: 1, signal: null });
    expect(onlyLine(outcome)).toMatchObject({
      level: 60,
      role: "worker",
      msg: "invalid configuration: REDIS_URL: expected a database number as the path, such as redis://127.0.0.1:6379/0 (no path: database 0)",
    });
  });
});
