// The image under Kubernetes' readOnlyRootFilesystem (no Docker engine here: the Dockerfile's
// runtime environment is read from it, and a process started as its CMD starts them). tsx made
// its compile cache under os.tmpdir() at import, without a catch: every process died there with
// EROFS (ENOTDIR here: a TMPDIR that is a file stands in for a read-only /tmp) before its first
// line. With the image's environment it starts and says what it says without a writable /tmp.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { exitWithin } from "../helpers/pipeline.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
/** Start-up (tsx, on two shared cores); the refusal itself is at once. */
const EXIT_BOUND_MS = 30_000;

/** The ENV of the Dockerfile's runtime stage (the last FROM), as `NAME=value` pairs. */
function runtimeEnv(): Record<string, string> {
  const dockerfile = readFileSync(join(ROOT, "Dockerfile"), "utf8");
  const runtime = dockerfile.slice(dockerfile.lastIndexOf("\nFROM "));
  return Object.fromEntries([...runtime.matchAll(/^ENV\s+([A-Z0-9_]+)=(\S+)$/gm)].map((m) => [m[1]!, m[2]!]));
}

const scratch = mkdtempSync(join(tmpdir(), "read-only-root-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe("the image's runtime environment with no writable /tmp", () => {
  it("lets a process start and say its first line instead of dying in tsx's cache", async () => {
    const notADirectory = join(scratch, "tmp");
    writeFileSync(notADirectory, "");
    // Only what the image sets, as a container gets it: nothing of this machine's environment but PATH.
    const child = spawn(process.execPath, ["--import", "tsx", "src/bin/migrate.ts"], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, ...runtimeEnv(), TMPDIR: notADirectory, DATABASE_URL: "not-a-url" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    expect(await exitWithin(child, EXIT_BOUND_MS), output).toEqual({ code: 1, signal: null });
    expect(output).not.toContain("ENOTDIR");
    expect(JSON.parse(output.trim())).toMatchObject({ level: 60, role: "migrate", msg: expect.stringMatching(/^invalid configuration: DATABASE_URL: /) });
  }, EXIT_BOUND_MS + 10_000);
});
