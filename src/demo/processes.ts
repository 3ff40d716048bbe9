// Starts the API and the worker as separate child processes, exactly as operators run them.
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

export type Child = { name: string; process: ChildProcess; exited: Promise<number | null> };

export function startChild(name: string, script: string, env: NodeJS.ProcessEnv, onLine: (line: string) => void): Child {
  // node --import tsx, not tsx's CLI: the CLI relays a signal to its child and sends SIGKILL
  // when the child has not acknowledged it within 60 ms, which a busy event loop does not.
  const child = spawn(process.execPath, ["--import", "tsx", script], {
    cwd: ROOT,
    env,
    stdio: ["ignore", "pipe", "pipe"],
    // Its own process group: a terminal's Ctrl-C reaches the demo, which stops the children in order.
    detached: true,
  });
  const forward = (chunk: Buffer) => {
    for (const line of chunk.toString("utf8").split("\n")) if (line.trim()) onLine(line);
  };
  child.stdout?.on("data", forward);
  child.stderr?.on("data", forward);
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return { name, process: child, exited };
}

/** SIGTERM, then SIGKILL if the child has not exited within graceMs. */
export async function stopChild(child: Child, graceMs: number): Promise<number | null> {
  if (child.process.exitCode !== null) return child.process.exitCode;
  child.process.kill("SIGTERM");
  const timer = setTimeout(() => child.process.kill("SIGKILL"), graceMs);
  const code = await child.exited;
  clearTimeout(timer);
  return code;
}

export async function waitForReady(url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = "no answer";
  while (Date.now() < deadline) {
    try {
      const response = await fetch(url);
      if (response.ok) return;
      last = `HTTP ${response.status}`;
    } catch (error) {
      last = (error as Error).message;
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`${url} was not ready within ${timeoutMs} ms (${last})`);
}
