// A service process (src/bin/api.ts, src/bin/worker.ts) whose wall clock is shifted, with
// Debian's libfaketime (`apt-get install faketime`; .ci/run installs it when missing): its
// Date.now() is off by what a file says ("+120s", "-660s", "+0s"), read again at every call so
// that a test can put a running process's clock right; its timers (the monotonic clock) stay
// real. PostgreSQL, Redis and the test itself keep the real clock.
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { testEnv, type TestApp } from "./app.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

export type ShiftedClock = {
  /** Moves the process's clock: "+120s" (ahead), "-660s" (behind), "+0s" (right). */
  set: (offset: string) => void;
  /** Removes the file. */
  remove: () => void;
  env: Record<string, string>;
};

/** The library `faketime` preloads (its LD_PRELOAD, as the dynamic loader reads it). */
function faketimeLibrary(): string {
  try {
    return execFileSync("faketime", ["-f", "+0s", "printenv", "LD_PRELOAD"], { encoding: "utf8" }).trim();
  } catch (error) {
    throw new Error(`these tests shift a process's clock with Debian's faketime (apt-get install faketime; .ci/run installs it): ${(error as Error).message}`, {
      cause: error,
    });
  }
}

export function shiftedClock(offset: string): ShiftedClock {
  const dir = mkdtempSync(join(tmpdir(), "wallet-alerts-clock-"));
  const file = join(dir, "faketime");
  const set = (value: string) => writeFileSync(file, `${value}\n`);
  set(offset);
  return {
    set,
    remove: () => rmSync(dir, { recursive: true, force: true }),
    env: {
      LD_PRELOAD: faketimeLibrary(),
      FAKETIME_TIMESTAMP_FILE: file,
      FAKETIME_NO_CACHE: "1",
      FAKETIME_DONT_FAKE_MONOTONIC: "1",
    },
  };
}

/** `script` as a process of its own on the test app's database and queue prefix, its clock shifted; its output collected. */
export function spawnShifted(
  t: TestApp,
  script: string,
  clock: ShiftedClock,
  env: Record<string, string>,
): ChildProcess & { output: () => string } {
  let output = "";
  const child = spawn(process.execPath, ["--import", "tsx", script], {
    cwd: ROOT,
    env: {
      ...process.env,
      ...testEnv({ DATABASE_URL: t.config.databaseUrl, QUEUE_PREFIX: t.config.queuePrefix, LOG_LEVEL: "info", ...env }),
      ...clock.env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  return Object.assign(child, { output: () => output });
}

/** The process's JSON log lines (other output left out). */
export function logLines(output: string): Array<{ level: number; msg: string } & Record<string, unknown>> {
  return output.split("\n").flatMap((line) => {
    try {
      const parsed = JSON.parse(line) as unknown;
      return typeof parsed === "object" && parsed !== null && "msg" in parsed ? [parsed as { level: number; msg: string }] : [];
    } catch {
      return [];
    }
  });
}
