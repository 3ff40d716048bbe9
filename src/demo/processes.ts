// Starts the API and the worker as separate child processes, exactly as operators run them.
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { DEFAULT_CLOSE_TIMEOUT_MS } from "../queue/run-workers.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/**
 * How long a child gets between SIGTERM and SIGKILL. The worker waits up to
 * DEFAULT_CLOSE_TIMEOUT_MS for its active jobs, then closes its connections (the API drains for
 * as long): killed before, a delivery in flight is cut short and sent again once its lock
 * expires. The margin makes it the 30 s the README asks of any process manager.
 */
export const STOP_GRACE_MS = DEFAULT_CLOSE_TIMEOUT_MS + 10_000;

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
export async function stopChild(child: Child, graceMs = STOP_GRACE_MS): Promise<number | null> {
  if (hasExited(child)) return child.process.exitCode;
  child.process.kill("SIGTERM");
  const timer = setTimeout(() => child.process.kill("SIGKILL"), graceMs);
  const code = await child.exited;
  clearTimeout(timer);
  return code;
}

/**
 * SIGKILL now: a second Ctrl-C. The children run in process groups of their own, which a
 * terminal's Ctrl-C does not reach, so a demo that just exited would leave them running.
 */
export function killChild(child: Child): void {
  if (!hasExited(child)) child.process.kill("SIGKILL");
}

const hasExited = (child: Child) => child.process.exitCode !== null || child.process.signalCode !== null;

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
