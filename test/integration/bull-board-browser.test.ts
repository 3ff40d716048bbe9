import type { AddressInfo } from "node:net";
import { chromium, type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ALL_QUEUES } from "../../src/queue/names.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";

const ADMIN = { username: "ops", password: "correct-horse-battery" };

// Debian's chromium, installed by .ci/run when missing. The flags keep it off the network
// (no updates, sync or QUIC) and working as root in a container.
const CHROMIUM = "/usr/bin/chromium";
const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

let t: TestApp;
let origin: string;
let browser: Browser;
beforeAll(async () => {
  t = await startTestApp("bull-board-browser", { ADMIN_USER: ADMIN.username, ADMIN_PASSWORD: ADMIN.password });
  await t.app.listen({ host: "127.0.0.1", port: 0 });
  origin = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

describe("Bull Board in a real browser", () => {
  it("shows every queue once the admin credentials are given, with all of its own assets loaded", async () => {
    await t.deps.queues.transactions.add("evaluate", { batchId: "bat_browser" });
    const context = await browser.newContext({ httpCredentials: ADMIN });
    try {
      const page = await context.newPage();
      const failed: string[] = [];
      page.on("response", (response) => {
        if (response.url().startsWith(origin) && response.status() >= 400) failed.push(`${response.status()} ${response.url()}`);
      });
      page.on("requestfailed", (request) => {
        if (request.url().startsWith(origin)) failed.push(`failed ${request.url()}`);
      });
      const response = await page.goto(`${origin}/admin/queues`);
      expect(response?.status()).toBe(200);
      for (const queue of ALL_QUEUES) {
        await page.getByText(queue, { exact: true }).first().waitFor({ state: "visible", timeout: 20_000 });
      }
      expect(await page.title()).toBe("wallet-alerts");
      expect(failed).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it("is refused with wrong credentials", async () => {
    const context = await browser.newContext({ httpCredentials: { ...ADMIN, password: "wrong-password" } });
    try {
      const page = await context.newPage();
      const response = await page.goto(`${origin}/admin/queues`);
      expect(response?.status()).toBe(401);
      expect(await page.getByText("deliver-webhook").count()).toBe(0);
    } finally {
      await context.close();
    }
  });
});
