import { spawn } from "node:child_process";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiError, createApiClient } from "../../src/sim/client.ts";
import { createPopulation } from "../../src/sim/population.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { TEST_JWT_SECRET } from "../helpers/env.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const SEED = 11;
const WALLETS = 20;

type Run = { code: number | null; stdout: string; stderr: string };

/** Runs `npm run simulate`'s entry point as its own process; `interruptAfter` sends SIGINT when a line matches. */
function simulate(args: string[], interruptAfter?: RegExp, env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", "src/bin/simulate.ts", ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, JWT_SECRET: TEST_JWT_SECRET, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    let interrupted = false;
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
      if (interruptAfter && !interrupted && interruptAfter.test(stdout)) {
        interrupted = true;
        child.kill("SIGINT");
      }
    });
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

const summary = (stdout: string) => {
  const match = /done: sent=(\d+) accepted=(\d+) duplicates=(\d+) errors=(\d+)/.exec(stdout);
  if (!match) throw new Error(`no summary line in:\n${stdout}`);
  const [sent, accepted, duplicates, errors] = match.slice(1).map(Number);
  return { sent: sent!, accepted: accepted!, duplicates: duplicates!, errors: errors! };
};

let t: TestApp;
let url: string;
beforeAll(async () => {
  t = await startTestApp("simulate");
  await t.app.listen({ port: 0, host: "127.0.0.1" });
  url = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await t.close();
});

describe("npm run simulate", () => {
  const population = createPopulation(SEED, WALLETS);
  // A function: the URL is known only once beforeAll has run.
  const common = () => ["--url", url, "--rate", "200", "--wallets", String(WALLETS), "--seed", String(SEED)];

  it("tracks the wallets, labels the counterparties and posts batches that are stored, then stops after --duration", async () => {
    const run = await simulate([...common(), "--duration", "2s"]);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`tracking ${WALLETS} wallets (${WALLETS} new, 0 already tracked)`);
    expect(run.stdout).toMatch(/\[\s+1s\] sent=\d+ accepted=\d+/);
    const { sent, accepted, errors } = summary(run.stdout);
    expect(sent).toBeGreaterThan(0);
    expect(accepted).toBe(sent);
    expect(errors).toBe(0);

    const count = async (query: Promise<{ n: number }[]>) => (await query)[0]!.n;
    expect(await count(t.deps.sql`select count(*)::int as n from tracked_wallets where owner = 'simulator'`)).toBe(WALLETS);
    const rows = await t.deps.sql<{ from_address: string; to_address: string }[]>`select from_address, to_address from transactions`;
    expect(rows).toHaveLength(accepted);
    const tracked = new Set(population.wallets);
    expect(rows.every((r) => tracked.has(r.from_address) || tracked.has(r.to_address))).toBe(true);
    expect(await count(t.deps.sql<{ n: number }[]>`select count(*)::int as n from risk_labels`)).toBe(population.labels.length);
    const withBalance = t.deps.sql<{ n: number }[]>`
      select count(*)::int as n from address_state where address = any(${population.wallets as string[]}) and balance > 0`;
    expect(await count(withBalance)).toBe(WALLETS);
  });

  it("stops cleanly on Ctrl-C; a second run with the same seed reuses the wallets and sends new transactions", async () => {
    const before = Number((await t.deps.sql`select count(*)::int as n from transactions`)[0]!.n);
    const run = await simulate(common(), /\[\s+1s\]/);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`(0 new, ${WALLETS} already tracked)`);
    const { sent, accepted, duplicates } = summary(run.stdout);
    expect(accepted).toBe(sent);
    expect(duplicates).toBe(0);
    const after = Number((await t.deps.sql`select count(*)::int as n from transactions`)[0]!.n);
    expect(after - before).toBe(accepted);
  });

  it("mints its token from the JWT settings alone: a bad PORT or SMTP_URL kept for the API does not stop it", async () => {
    const run = await simulate([...common(), "--duration", "1s"], undefined, { PORT: "not-a-port", SMTP_URL: "mailto:x" });
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(summary(run.stdout).errors).toBe(0);
  });

  it("posts, without --url, to the API that the same shell's PORT and HOST start", async () => {
    const port = new URL(url).port;
    const run = await simulate(["--rate", "200", "--wallets", String(WALLETS), "--seed", String(SEED), "--duration", "1s"], undefined, {
      PORT: port,
      HOST: "127.0.0.1",
    });
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`against http://127.0.0.1:${port} `);
    expect(summary(run.stdout).errors).toBe(0);
  });

  it("exits 1 with a message when no token can be had", async () => {
    const child = spawn(process.execPath, ["--import", "tsx", "src/bin/simulate.ts", "--url", url], {
      cwd: ROOT,
      env: { PATH: process.env.PATH },
    });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise((resolve) => child.on("close", resolve));
    expect(code).toBe(1);
    expect(stderr).toContain("JWT_SECRET");
  });
});

describe("npm run simulate for longer than the API lets a token live", () => {
  let capped: TestApp;
  let cappedUrl: string;
  beforeAll(async () => {
    capped = await startTestApp("simulate-token-age", { JWT_MAX_TOKEN_AGE: "1m" });
    await capped.app.listen({ port: 0, host: "127.0.0.1" });
    cappedUrl = `http://127.0.0.1:${(capped.app.server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await capped?.close();
  });

  it("mints its token again and keeps posting past JWT_MAX_TOKEN_AGE", async () => {
    const args = ["--url", cappedUrl, "--rate", "5", "--wallets", "5", "--seed", String(SEED), "--duration", "100s"];
    const run = await simulate(args, undefined, { JWT_MAX_TOKEN_AGE: "1m" });
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    // The API refuses a token issued more than 60 s (and its 30 s clock tolerance) ago: what
    // was accepted after 90 s went with a token minted since.
    expect(run.stdout).toMatch(/\[\s+(9[2-9]|1\d\d)s\] sent=\d+ accepted=[1-9]/);
    const { sent, accepted, errors } = summary(run.stdout);
    expect(errors).toBe(0);
    expect(accepted).toBe(sent);
    expect(sent).toBe(500);
  }, 180_000);
});

describe("the simulator's API client", () => {
  /** A loopback server answering each request with the next of `answers`. */
  async function scripted(answers: { status: number; headers?: Record<string, string>; body?: unknown }[]) {
    const seen: { method?: string; url?: string; authorization?: string }[] = [];
    const server = createServer((req: IncomingMessage, res: ServerResponse) => {
      req.resume();
      req.on("end", () => {
        seen.push({ method: req.method, url: req.url, authorization: req.headers.authorization });
        const answer = answers[Math.min(seen.length - 1, answers.length - 1)]!;
        res.writeHead(answer.status, { "content-type": "application/json", ...answer.headers });
        res.end(answer.body === undefined ? "" : JSON.stringify(answer.body));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return { base, seen, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
  }

  it("waits out a 429 and a 503 with Retry-After, then returns the accepted counts", async () => {
    const server = await scripted([
      { status: 429, headers: { "retry-after": "0" }, body: { detail: "slow down" } },
      { status: 503, headers: { "retry-after": "0" } },
      { status: 202, body: { accepted: 3, duplicates: 1 } },
    ]);
    const client = createApiClient({ baseUrl: server.base, token: "tok" });
    try {
      expect(await client.postTransactions([])).toEqual({ accepted: 3, duplicates: 1 });
      expect(server.seen).toHaveLength(3);
      expect(server.seen[0]).toEqual({ method: "POST", url: "/v1/ingest/transactions", authorization: "Bearer tok" });
    } finally {
      await client.close();
      await server.close();
    }
  });

  it("does not retry a 401 and reports the problem's detail", async () => {
    const server = await scripted([{ status: 401, body: { detail: "the token has expired" } }]);
    const client = createApiClient({ baseUrl: server.base, token: "tok" });
    try {
      const error = await client.putLabels([]).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ApiError);
      expect((error as ApiError).status).toBe(401);
      expect((error as Error).message).toBe("PUT /v1/risk/labels answered 401: the token has expired");
      expect(server.seen).toHaveLength(1);
    } finally {
      await client.close();
      await server.close();
    }
  });

  it("takes a 409 from POST /v1/wallets as already tracked", async () => {
    const server = await scripted([{ status: 409, body: { detail: "already tracked" } }]);
    const client = createApiClient({ baseUrl: `${server.base}/`, token: "tok" });
    try {
      expect(await client.trackWallet({ address: createPopulation(1, 1).wallets[0]! })).toBe("exists");
    } finally {
      await client.close();
      await server.close();
    }
  });
});
