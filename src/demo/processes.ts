// Starts the API and the worker as separate child processes, exactly as operators run them.
import { spawn, type ChildProcess } from "node:child_process";
import { createServer } from "node:net";
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

export type Child = {
  name: string;
  process: ChildProcess;
  /** Its exit code (null when a signal ended it), once it has exited and its output has been read. */
  exited: Promise<number | null>;
  /** The last line it wrote (stdout or stderr), if any. */
  lastLine: () => string | undefined;
};

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
  let lastLine: string | undefined;
  const forward = (chunk: Buffer) => {
    for (const line of chunk.toString("utf8").split("\n")) {
      if (!line.trim()) continue;
      lastLine = line;
      onLine(line);
    }
  };
  child.stdout?.on("data", forward);
  child.stderr?.on("data", forward);
  // 'close', not 'exit': a child's last words (its fatal line) may still be in the pipe at 'exit'.
  const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
  return { name, process: child, exited, lastLine: () => lastLine };
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

/** A child the demo started ended while the demo waited for the API: what it said last. */
export class ChildExited extends Error {
  override name = "ChildExited";
}

/**
 * Waits until `url` (an API's /readyz) answers that it is ready: 200 with `{"status":"ready"}`, as
 * the API's own does (a development server's fallback page answers 200 to any path). While it
 * waits, a child in `children` that exits ends the wait with what it said last (the API's
 * `EADDRINUSE` line, a refused setting): the demo used to stop its children before they had
 * said it, and report whatever the server on the port answered its first request instead.
 */
export async function waitForReady(url: string, timeoutMs: number, children: readonly Child[] = []): Promise<void> {
  let ended: { child: Child; code: number | null } | undefined;
  const anyExit = Promise.race(children.map((child) => child.exited.then((code) => (ended ??= { child, code }))));
  const deadline = Date.now() + timeoutMs;
  let last = "no answer";
  while (Date.now() < deadline && !ended) {
    try {
      const response = await fetch(url);
      const body = await response.text();
      if (ended) break;
      if (response.ok && isReadyBody(body)) return;
      last = response.ok ? `HTTP ${response.status} without {"status":"ready"}` : `HTTP ${response.status}`;
    } catch (error) {
      last = (error as Error).message;
    }
    await Promise.race([new Promise((resolve) => setTimeout(resolve, 250)), anyExit]);
  }
  if (ended) {
    const how = ended.code === null ? "was killed" : `exited (code ${ended.code})`;
    throw new ChildExited(`the ${ended.child.name} ${how} before ${url} was ready${lastWords(ended.child)}`);
  }
  throw new Error(`${url} was not ready within ${timeoutMs} ms (${last})`);
}

function isReadyBody(body: string): boolean {
  try {
    return (JSON.parse(body) as { status?: unknown } | null)?.status === "ready";
  } catch {
    return false;
  }
}

/** ": <the child's last line>" (a pino line's message), or nothing when it said nothing. */
export function lastWords(child: Child): string {
  const line = child.lastLine();
  if (line === undefined) return "";
  try {
    const msg = (JSON.parse(line) as { msg?: unknown } | null)?.msg;
    return `: ${typeof msg === "string" ? msg : line}`;
  } catch {
    return `: ${line}`;
  }
}

/**
 * Whether a server could listen on host:port now: undefined if so, or the listen's error
 * (EADDRINUSE: another program has it). Asked before the demo does anything, so that a port
 * taken by another server (docker compose's API, a development server, an earlier demo) is said
 * plainly instead of that server being taken for the demo's API.
 */
export function listenProbe(host: string, port: number): Promise<NodeJS.ErrnoException | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", (error: NodeJS.ErrnoException) => resolve(error));
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve(undefined)));
  });
}
