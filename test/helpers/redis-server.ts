// A redis-server of the test's own (on PATH), on a free loopback port: for tests of settings
// that Redis refuses (a password) or of a Redis in a state the shared one must not be put in
// (full at its maxmemory). The machine's Redis is shared and has no password.
import { spawn } from "node:child_process";
import { Redis } from "ioredis";
import { freePort } from "./ports.ts";
import { waitFor } from "./wait.ts";

export type OwnRedis = {
  port: number;
  /** A URL with the given password (none: no password at all). */
  url: (password?: string) => string;
  /** A command connection with the current password, for the test's own use. */
  admin: Redis;
  stop: () => Promise<void>;
};

/** `password`: required of clients (none: no password); `args`: more of redis-server's options. */
export async function startOwnRedis(options: { password?: string; args?: string[] } = {}): Promise<OwnRedis> {
  const port = await freePort();
  const passwordArgs = options.password === undefined ? [] : ["--requirepass", options.password];
  const server = spawn(
    "redis-server",
    ["--port", String(port), "--bind", "127.0.0.1", ...passwordArgs, "--save", "", "--appendonly", "no", ...(options.args ?? [])],
    { stdio: "ignore" },
  );
  const exited = new Promise<void>((resolve) => server.once("exit", () => resolve()));
  const url = (given?: string) => `redis://${given === undefined ? "" : `:${encodeURIComponent(given)}@`}127.0.0.1:${port}`;
  // Refused until the server listens; tried again every 100 ms.
  const admin = new Redis(url(options.password), { maxRetriesPerRequest: 1, retryStrategy: () => 100 });
  admin.on("error", () => {});
  try {
    await waitFor("the test's redis-server to answer", async () => admin.status === "ready", 10_000);
  } catch (error) {
    admin.disconnect();
    server.kill("SIGKILL");
    throw error;
  }
  return {
    port,
    url,
    admin,
    stop: async () => {
      admin.disconnect();
      server.kill("SIGTERM");
      await exited;
    },
  };
}

export type PasswordRedis = OwnRedis;

export function startPasswordRedis(password: string): Promise<PasswordRedis> {
  return startOwnRedis({ password });
}
