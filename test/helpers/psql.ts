// psql, as the README tells an operator to run its scripts: `-v ON_ERROR_STOP=1` (a failed
// statement ends the script there) and the script's variables as `-v name=value`, which psql
// quotes itself where the script says :'name'. -X: no ~/.psqlrc of the machine's.
import { spawn } from "node:child_process";

export type PsqlRun = { code: number | null; stdout: string; stderr: string };

export function runPsql(databaseUrl: string, script: string, variables: Record<string, string> = {}): Promise<PsqlRun> {
  const settings = Object.entries({ ON_ERROR_STOP: "1", ...variables }).flatMap(([name, value]) => ["-v", `${name}=${value}`]);
  const child = spawn("psql", ["-X", "-q", ...settings, "-d", databaseUrl, "-f", "-"], { stdio: ["pipe", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  child.stdin.end(script);
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (code) => resolve({ code, stdout, stderr }));
  });
}
