// A "Redis" on loopback that accepts connections and then never answers: a hung or SIGSTOP'd
// server, which raises no error and refuses nothing. With `answerHandshake` it first answers
// ioredis's handshake (CLIENT SETINFO, INFO), so the connection is ready, and goes silent at the
// first real command: a server that hangs between connecting and answering a query.
import { createServer, type Socket } from "node:net";
import type { AddressInfo } from "node:net";

export type SilentRedis = { url: string; close: () => Promise<void> };

const INFO = "# Server\r\nredis_version:7.2.0\r\nloading:0\r\n";
/** The command name of each RESP array in a chunk: enough for the handshake's few commands. */
const COMMAND_NAME = /\*\d+\r\n\$\d+\r\n([^\r]+)\r\n/g;

export async function startSilentRedis(options: { answerHandshake?: boolean } = {}): Promise<SilentRedis> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
    socket.on("error", () => {});
    let silent = !options.answerHandshake;
    socket.on("data", (chunk: Buffer) => {
      for (const [, name] of chunk.toString("latin1").matchAll(COMMAND_NAME)) {
        if (silent) return;
        const command = name!.toLowerCase();
        if (command === "client") socket.write("+OK\r\n");
        else if (command === "info") socket.write(`$${Buffer.byteLength(INFO)}\r\n${INFO}\r\n`);
        else silent = true;
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `redis://127.0.0.1:${port}`,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
