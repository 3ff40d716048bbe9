// Jobs that lose their locks (a Redis outage longer than a lock's 15 s) each end with BullMQ's
// "Missing lock for job <id>. moveToFinished": one kind of worker error, logged at warn once
// a minute with a count (README, Monitoring), not a line and a stack per job.
import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../src/logger.ts";
import { createChannels } from "../../src/notify/channels/index.ts";
import { runWorkers } from "../../src/queue/run-workers.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { track, waitFor } from "../helpers/pipeline.ts";
import { bearer } from "../helpers/seed.ts";

const JOBS = 3;

type Line = { level: number; msg: string; err?: { message?: string }; repeatsNotLogged?: number };

let t: TestApp;
let receiver: Server;
const held: ServerResponse[] = [];

beforeAll(async () => {
  t = await startTestApp("lost-lock-log");
  // A webhook receiver that answers only when the test says so: deliveries stay in flight.
  receiver = createServer((req, res) => {
    req.resume();
    req.on("end", () => held.push(res));
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
});
afterAll(async () => {
  receiver.closeAllConnections();
  await new Promise((resolve) => receiver.close(resolve));
  await t.close();
});

describe("deliveries whose locks were lost", () => {
  it("log one missing-lock warning for all of them, the others at debug", async () => {
    const token = await t.token("alice");
    const { walletId } = await track(t, token);
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks/held`;
    const created = await t.app.inject({
      method: "POST",
      url: "/v1/risk/alerts",
      headers: bearer(token),
      payload: { walletId, condition: "unusual_activity", notificationMethod: "webhook", webhookUrl: url },
    });
    for (let i = 0; i < JOBS; i++) {
      const sent = await t.app.inject({ method: "POST", url: `/v1/risk/alerts/${created.json().alertId}/test`, headers: bearer(token) });
      expect(sent.statusCode, sent.body).toBe(202);
    }

    const lines: Line[] = [];
    const logger = createLogger("debug", new Writable({ write: (chunk: Buffer, _e, done) => (lines.push(JSON.parse(chunk.toString()) as Line), done()) }));
    const channels = createChannels(t.config, logger);
    const running = runWorkers({ ...t.deps, logger, channels }, { queues: ["deliver-webhook"] });
    const missingLock = (level: number, command = "moveToFinished") =>
      lines.filter((line) => line.level === level && line.msg.startsWith("worker error") && new RegExp(`^Missing lock for job \\S+\\. ${command}$`).test(line.err?.message ?? ""));
    try {
      await waitFor("every delivery to be under way", async () => held.length === JOBS);
      // What a long outage leaves: the locks expired while the jobs ran.
      const ids = (await t.deps.sql<{ id: string }[]>`select id from notifications`).map((row) => row.id);
      expect(ids).toHaveLength(JOBS);
      await t.deps.redis.del(...ids.map((id) => `${t.config.queuePrefix}:deliver-webhook:${id}:lock`));
      for (const res of held) res.writeHead(200).end("ok");
      await waitFor("every job to find its lock gone", async () => missingLock(40).length + missingLock(20).length === JOBS);
    } finally {
      await running.close(2_000);
      await channels.close();
    }

    expect(missingLock(40), JSON.stringify(missingLock(40))).toHaveLength(1);
    // The others of the kind went to debug, to be counted on its next warning of the minute.
    expect(missingLock(20)).toHaveLength(JOBS - 1);
    // BullMQ then failed to retry them ("… moveToDelayed"): another kind, at warn once at most.
    expect(missingLock(40, "moveToDelayed").length).toBeLessThanOrEqual(1);
  });
});
