// The whole email send within the channel's timeout, as a webhook's: nodemailer's timeouts are
// per step, so a server slow at every reply ran a send past the worker's 20 s shutdown wait,
// which cut it mid-conversation (and a restarted worker sent it again). A real SMTP dialogue on
// loopback, from a server that waits before each reply.
import { createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { afterEach, describe, expect, it } from "vitest";
import { createEmailChannel } from "../../src/notify/channels/email.ts";
import { renderDisabledNotice } from "../../src/notify/render.ts";

type SlowServer = { port: number; sawMessageEnd: () => boolean; close: () => Promise<void> };

/** A minimal SMTP server that answers every command, the greeting too, after `delayMs`. */
async function startSlowSmtp(delayMs: number): Promise<SlowServer> {
  let messageEnd = false;
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => {});
    const reply = (line: string) => setTimeout(() => socket.writable && socket.write(`${line}\r\n`), delayMs);
    let inData = false;
    let buffered = "";
    reply("220 slow.example ESMTP");
    socket.on("data", (chunk) => {
      buffered += chunk.toString("latin1");
      let end: number;
      while ((end = buffered.indexOf("\r\n")) !== -1) {
        const line = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        if (inData) {
          if (line === ".") {
            inData = false;
            messageEnd = true;
            reply("250 queued");
          }
          continue;
        }
        const verb = line.slice(0, 4).toUpperCase();
        if (verb === "EHLO") reply("250 slow.example");
        else if (verb === "DATA") {
          inData = true;
          reply("354 go ahead");
        } else if (verb === "QUIT") reply("221 bye");
        else reply("250 ok");
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return {
    port,
    sawMessageEnd: () => messageEnd,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const notice = renderDisabledNotice({
  alertId: "alr_1",
  condition: "large_transfer",
  walletName: "Treasury",
  address: "7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU",
  reason: "the webhook endpoint answered 410 Gone",
  channel: "webhook",
  destination: "https://hooks.example.com/alerts",
});
let cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const step of cleanup) await step();
  cleanup = [];
});

async function channelTo(delayMs: number, timeoutMs: number) {
  const server = await startSlowSmtp(delayMs);
  const channel = createEmailChannel({ smtpUrl: `smtp://127.0.0.1:${server.port}`, from: "alerts@example.com", timeoutMs, outboxDir: tmpdir() });
  cleanup.push(() => channel.close(), () => server.close());
  return { server, channel };
}

describe("the email channel's timeout", () => {
  it("ends a send that a server slow at every reply would carry past it, before the message is through, as the provider's trouble", async () => {
    // Six replies of 400 ms each: 2.4 s for the whole dialogue, against a 1 s timeout.
    const { server, channel } = await channelTo(400, 1_000);

    const result = await channel.sendMail("ops@fund.example", notice);

    expect(result).toMatchObject({ errorCode: "EABORT", providerUnavailable: true });
    expect(result.error).toBe("EABORT: the SMTP server did not take the message within the 1 s timeout");
    // Cut before the end of the message: the server never took it, so the retry is not a second copy.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(server.sawMessageEnd()).toBe(false);
  });

  it("delivers through a slow server whose whole dialogue fits in it", async () => {
    const { server, channel } = await channelTo(100, 5_000);

    const result = await channel.sendMail("ops@fund.example", notice);

    expect(result.error).toBeUndefined();
    expect(result.smtpResponseCode).toBe(250);
    expect(server.sawMessageEnd()).toBe(true);
  });
});
