// npm run demo as a newcomer runs it: a real process that starts the API and the worker as
// children. Every condition must be delivered on every channel, and Ctrl-C stops it all.
import { spawn } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, uniqueQueuePrefix } from "../helpers/db.ts";
import { TEST_REDIS_URL } from "../helpers/env.ts";
import { freePort } from "../helpers/ports.ts";
import { deletePrefixKeysAt } from "../helpers/redis-keys.ts";

const CONDITIONS = ["large_transfer", "suspicious_counterparty", "risk_score_increase", "unusual_activity"];
let database: Awaited<ReturnType<typeof createTestDatabase>>;
const prefix = uniqueQueuePrefix("demo");

beforeAll(async () => {
  database = await createTestDatabase("demo");
});
afterAll(async () => {
  await deletePrefixKeysAt(TEST_REDIS_URL, prefix);
  await database.drop();
});

describe("npm run demo", () => {
  it("delivers every condition by webhook (signature verified), email and SMS to a caller whose token carries the issuer and audience the API checks, then stops cleanly on SIGINT", async () => {
    const port = await freePort();
    const child = spawn(process.execPath, ["--import", "tsx", "src/bin/demo.ts"], {
      env: {
        ...process.env,
        DATABASE_URL: database.url,
        REDIS_URL: TEST_REDIS_URL,
        PORT: String(port),
        QUEUE_PREFIX: prefix,
        // The API then refuses tokens without this issuer and audience: the demo's must carry them.
        JWT_ISSUER: "https://issuer.demo.test/",
        JWT_AUDIENCE: "wallet-alerts-demo",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));

    const delivered = (channel: string, condition: string) =>
      channel === "webhook"
        ? new RegExp(`webhook delivered → sink \\(signature verified.*\\[${condition}\\]`).test(output)
        : new RegExp(`${channel}\\s+delivered → .*\\[${condition}\\]`).test(output);
    const all = () => CONDITIONS.every((c) => ["webhook", "email", "sms"].every((ch) => delivered(ch, c)));
    const deadline = Date.now() + 60_000;
    while (!all() && Date.now() < deadline && child.exitCode === null) await new Promise((r) => setTimeout(r, 250));

    child.kill("SIGINT");
    const code = await exited;
    for (const condition of CONDITIONS) {
      for (const channel of ["webhook", "email", "sms"]) expect(delivered(channel, condition), `${channel} ${condition}\n${output}`).toBe(true);
    }
    expect(output).not.toMatch(/SIGNATURE NOT VERIFIED|FAILED/);
    expect(output).toMatch(/TOKEN=ey/);
    expect(code).toBe(0);
  }, 120_000);
});
