// How the demo stops its API and worker children, with real child processes that are slow to
// stop: the timers of the demo's side are faked, so 30 s of grace take no time.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { killChild, startChild, stopChild, type Child } from "../../src/demo/processes.ts";
import { DEFAULT_CLOSE_TIMEOUT_MS } from "../../src/queue/run-workers.ts";

// A child still finishing its work: it takes SIGTERM and goes on, as a worker with active jobs does.
const FINISHING_CHILD = `
process.on("SIGTERM", () => console.log("SIGTERM: finishing"));
setInterval(() => {}, 1000);
console.log("ready");
`;

let dir: string;
let script: string;
const started: Child[] = [];
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "demo-processes-"));
  script = join(dir, "finishing-child.mjs");
  await writeFile(script, FINISHING_CHILD);
});
afterEach(async () => {
  vi.useRealTimers();
  for (const child of started.splice(0)) {
    killChild(child);
    await child.exited;
  }
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A finishing child, once it listens for SIGTERM, and the signals the demo sends it. */
async function startFinishingChild(): Promise<{ child: Child; signals: string[] }> {
  let ready!: () => void;
  const isReady = new Promise<void>((resolve) => (ready = resolve));
  const child = startChild("finishing", script, process.env, (line) => line === "ready" && ready());
  started.push(child);
  await isReady;
  const signals: string[] = [];
  const kill = child.process.kill.bind(child.process);
  child.process.kill = (signal) => {
    signals.push(String(signal));
    return kill(signal);
  };
  return { child, signals };
}

describe("the demo's children", () => {
  it("get longer than the worker's wait for its active jobs between SIGTERM and SIGKILL: the README's 30 s", async () => {
    const { child, signals } = await startFinishingChild();
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const stopped = stopChild(child);
    expect(signals).toEqual(["SIGTERM"]);

    await vi.advanceTimersByTimeAsync(DEFAULT_CLOSE_TIMEOUT_MS + 1_000);
    expect(signals, "killed while the worker may still be finishing a delivery").toEqual(["SIGTERM"]);

    await vi.advanceTimersByTimeAsync(30_000 - DEFAULT_CLOSE_TIMEOUT_MS - 1_000);
    expect(signals).toEqual(["SIGTERM", "SIGKILL"]);
    await stopped;
    expect(child.process.signalCode).toBe("SIGKILL");
  });

  it("are killed at once by a second stop (a second Ctrl-C), without waiting for the grace", async () => {
    const { child, signals } = await startFinishingChild();
    void stopChild(child);
    killChild(child);
    await child.exited;
    expect(signals).toEqual(["SIGTERM", "SIGKILL"]);
    expect(child.process.signalCode).toBe("SIGKILL");
  });
});
