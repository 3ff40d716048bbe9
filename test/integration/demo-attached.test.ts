// The demo attached to a running service, as docker compose's feed runs it: on the service's own
// database, which holds other callers' data and whatever a customer made with the token the
// feed prints. It used to refuse to start there (compose then restarted it for ever) once any
// other caller had a wallet, and to delete every wallet of its caller on each start. It seeds
// beside them, and deletes only the wallets an earlier start of its own seeded (tagged
// demo-seed), through the API.
import { spawn, type ChildProcess } from "node:child_process";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { TEST_JWT_SECRET } from "../helpers/env.ts";
import { createAlert, exitWithin, track } from "../helpers/pipeline.ts";

/** Start-up and seeding (tsx, on two shared cores). */
const SEEDED_BOUND_MS = 90_000;
let t: TestApp;
let demo: ChildProcess | undefined;
let output = "";
const kept: Record<string, string> = {};
let earlierSeeded: string;

beforeAll(async () => {
  t = await startTestApp("demo-attached");
  await t.app.listen({ port: 0, host: "127.0.0.1" });
  // Another caller, with a wallet and an alert: the refusal's trigger.
  const alice = await t.token("alice");
  kept.alice = (await track(t, alice)).walletId;
  await createAlert(t, alice, { walletId: kept.alice, condition: "large_transfer", threshold: 1000 });
  // A customer's own wallet made with the demo's token (sub demo), and one an earlier start seeded.
  const asDemo = await t.token("demo");
  kept.customer = (await track(t, asDemo)).walletId;
  const seeded = await t.app.inject({
    method: "POST",
    url: "/v1/wallets",
    headers: { authorization: `Bearer ${asDemo}` },
    payload: { address: "So11111111111111111111111111111111111111112", tags: ["ops", "demo-seed"] },
  });
  earlierSeeded = seeded.json<{ walletId: string }>().walletId;
});
afterAll(async () => {
  if (demo && demo.exitCode === null && demo.signalCode === null) {
    demo.kill("SIGKILL");
    await exitWithin(demo, 10_000);
  }
  await t?.close();
});

const walletsOf = async (owner: string) =>
  (await t.deps.sql<{ id: string; tags: string[] }[]>`select id, tags from tracked_wallets where owner = ${owner} order by id`).map((row) => ({
    id: row.id,
    seeded: row.tags.includes("demo-seed"),
  }));

describe("the demo attached to a service whose database holds other callers' data", () => {
  it("seeds beside it, deleting only the wallets an earlier start seeded", { timeout: SEEDED_BOUND_MS + 30_000 }, async () => {
    const url = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    const child = spawn(process.execPath, ["--import", "tsx", "src/bin/demo.ts"], {
      cwd: new URL("../..", import.meta.url).pathname,
      env: { PATH: process.env.PATH, JWT_SECRET: TEST_JWT_SECRET, DEMO_API_URL: url, DEMO_DATABASE_URL: t.config.databaseUrl, LOG_LEVEL: "warn" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    demo = child;
    const seeded = new Promise<void>((resolve) => {
      child.stdout.on("data", (chunk: Buffer) => {
        output += chunk.toString();
        if (/seeded \d+ wallets/.test(output)) resolve();
      });
    });
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    const exited = exitWithin(child, SEEDED_BOUND_MS);
    const first = await Promise.race([seeded.then(() => "seeded"), exited.then((exit) => `exited ${JSON.stringify(exit)}`)]);
    expect(first, output).toBe("seeded");
    child.kill("SIGINT");
    expect(await exitWithin(child, 30_000), output).toEqual({ code: 0, signal: null });

    expect(output).toContain("deleted the 1 wallets an earlier start seeded (tagged demo-seed), with their alerts");
    expect(await walletsOf("alice")).toEqual([{ id: kept.alice, seeded: false }]);
    const demoWallets = await walletsOf("demo");
    expect(demoWallets.filter((wallet) => !wallet.seeded)).toEqual([{ id: kept.customer, seeded: false }]);
    expect(demoWallets.filter((wallet) => wallet.seeded)).toHaveLength(4);
    expect(demoWallets.map((wallet) => wallet.id)).not.toContain(earlierSeeded);
    expect(await t.deps.sql`select 1 from alerts where owner = 'alice'`).toHaveLength(1);
  });
});
