// A Twilio stand-in on loopback: Stoplight Prism serving Twilio's own Messages API
// description (test/fixtures/twilio), so every request our SDK client sends is validated
// against Twilio's contract; valid ones get a 201 Message, malformed ones a 422.
import { spawn, type ChildProcess } from "node:child_process";
import { createServer, type AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const PRISM = `${ROOT}node_modules/.bin/prism`;
const SPEC = `${ROOT}test/fixtures/twilio/messages-api.json`;
const START_TIMEOUT_MS = 30_000;

export const TEST_TWILIO = {
  accountSid: "AC0123456789abcdef0123456789abcdef",
  authToken: "test-auth-token",
  from: "+15005550006",
} as const;

export type TwilioStandin = {
  baseUrl: string;
  /** Prism's log so far: one line per validation step of every request. */
  log: () => string;
  close: () => Promise<void>;
};

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export async function startTwilioStandin(): Promise<TwilioStandin> {
  const port = await freePort();
  // Its own process group, so that close() ends Prism and anything it started, and only that.
  const child: ChildProcess = spawn(PRISM, ["mock", "-h", "127.0.0.1", "-p", String(port), SPEC], {
    cwd: ROOT,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
  child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));

  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`Prism did not start within ${START_TIMEOUT_MS} ms:\n${output}`)), START_TIMEOUT_MS);
    const check = () => {
      if (output.includes("Prism is listening")) {
        clearTimeout(timer);
        child.stdout!.off("data", check);
        resolve();
      }
    };
    child.stdout!.on("data", check);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`Prism exited with code ${code} before listening:\n${output}`));
    });
  });

  return {
    baseUrl: `http://127.0.0.1:${port}`,
    log: () => output,
    close: async () => {
      if (child.exitCode !== null || child.pid === undefined) return;
      const exited = new Promise((resolve) => child.once("exit", resolve));
      process.kill(-child.pid, "SIGTERM");
      await exited;
    },
  };
}
