// A server on loopback that speaks just enough of Redis's protocol (RESP2 arrays of bulk
// strings in, one reply out per command) to answer with what the test scripts: for what a
// real Redis cannot be made to do on demand, such as a connection whose answers are out of
// step with its commands.
import { createServer, type AddressInfo, type Socket } from "node:net";

/**
 * A reply in RESP2, written as it goes on the wire: "+OK\r\n", ":0\r\n", "-ERR …\r\n"; "" for
 * none: the connection then answers nothing more, as a real Redis answers in order (a command
 * left hanging holds every one after it on that connection).
 */
export type Answer = (command: readonly string[]) => string;

export type ScriptedRedis = {
  url: string;
  /** Every command received so far, upper-cased name first. */
  commands: () => string[][];
  close: () => Promise<void>;
};

/** What a freshly started Redis says to the handshake, to PING and to anything else. */
export function plainAnswer([name]: readonly string[]): string {
  if (name === "PING") return "+PONG\r\n";
  if (name === "CLIENT" || name === "SELECT") return "+OK\r\n";
  // The processes read Redis's clock (clock-watch.ts): seconds and microseconds, as Redis says them.
  if (name === "TIME") {
    const micros = BigInt(Date.now()) * 1000n;
    const [seconds, rest] = [String(micros / 1_000_000n), String(micros % 1_000_000n)];
    return `*2\r\n$${seconds.length}\r\n${seconds}\r\n$${rest.length}\r\n${rest}\r\n`;
  }
  return `-ERR unknown command '${name ?? ""}'\r\n`;
}

/** A Redis in every other respect whose INFO answer is an integer, not text (BullMQ: "doc.split is not a function"). */
export const integerInfoAnswer: Answer = (command) => (command[0] === "INFO" ? ":0\r\n" : plainAnswer(command));

/** INFO's answer as Redis writes it (a bulk string), for a script that answers INFO with `info`. */
export const bulkInfo = (info: string): string => `$${info.length}\r\n${info}\r\n`;

/** The JSON lines of a process's output (pino's), skipping anything else it printed. */
export function jsonLogLines<T>(output: string): T[] {
  return output
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as T);
}

export async function startScriptedRedis(answer: Answer): Promise<ScriptedRedis> {
  const received: string[][] = [];
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => socket.destroy());
    let pending = Buffer.alloc(0);
    // Once an answer is withheld, every later one on this connection is too (answers go in order:
    // one written past a hanging command would be taken as that command's).
    let hanging = false;
    socket.on("data", (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      try {
        for (let parsed = parseCommand(pending); parsed; parsed = parseCommand(pending)) {
          pending = pending.subarray(parsed.length);
          const command = [parsed.args[0]!.toUpperCase(), ...parsed.args.slice(1)];
          received.push(command);
          if (hanging) continue;
          const reply = answer(command);
          if (reply === "") hanging = true;
          else socket.write(reply);
        }
      } catch {
        // Not a client this server can talk to: drop it, as Redis drops a protocol error.
        socket.destroy();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `redis://127.0.0.1:${port}`,
    commands: () => received.map((command) => [...command]),
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** One complete command at the start of `data` (`*N\r\n` then N `$len\r\n…\r\n`), or undefined until it has all arrived. */
function parseCommand(data: Buffer): { args: string[]; length: number } | undefined {
  const line = (from: number) => {
    const end = data.indexOf("\r\n", from);
    return end === -1 ? undefined : { text: data.toString("latin1", from, end), next: end + 2 };
  };
  const header = line(0);
  if (!header) return undefined;
  if (!header.text.startsWith("*")) throw new Error(`scripted Redis: only RESP arrays are understood, got ${JSON.stringify(header.text)}`);
  const args: string[] = [];
  let at = header.next;
  for (let i = 0; i < Number(header.text.slice(1)); i++) {
    const size = line(at);
    if (!size) return undefined;
    const length = Number(size.text.slice(1));
    if (data.length < size.next + length + 2) return undefined;
    args.push(data.toString("utf8", size.next, size.next + length));
    at = size.next + length + 2;
  }
  return { args, length: at };
}
