// A TCP proxy on loopback in front of a real service, that a test can cut (every open
// connection dropped, the port closed so new ones are refused, as when the service is down)
// and restore (listening again on the same port): a dependency outage without stopping the
// machine's PostgreSQL or Redis, which other test files are using.
import { readFileSync } from "node:fs";
import { createConnection, createServer, type Socket } from "node:net";

export type TcpProxy = {
  port: number;
  /** Answers stop coming back (requests still go through): a service that hangs, e.g. saving before it shuts down. */
  stall: () => void;
  cut: () => Promise<void>;
  restore: () => Promise<void>;
  close: () => Promise<void>;
};

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const open = new Set<Socket>();
  const track = (socket: Socket) => {
    open.add(socket);
    socket.once("close", () => open.delete(socket));
  };
  let stalled = false;
  const server = createServer((client) => {
    const upstream = createConnection(target);
    track(client);
    track(upstream);
    client.pipe(upstream);
    upstream.on("data", (chunk: Buffer) => {
      if (!stalled) client.write(chunk);
    });
    client.on("error", () => upstream.destroy());
    upstream.on("error", () => client.destroy());
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
  });
  const listen = (port: number) =>
    new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, "127.0.0.1", () => {
        server.off("error", reject);
        resolve();
      });
    });
  const dropAll = () => {
    for (const socket of open) socket.destroy();
  };
  const port = await listenOnReservedPort(listen);
  return {
    port,
    stall: () => {
      stalled = true;
    },
    cut: async () => {
      dropAll();
      if (server.listening) await new Promise<void>((resolve) => server.close(() => resolve()));
    },
    restore: () => {
      stalled = false;
      return listen(port);
    },
    close: async () => {
      dropAll();
      if (server.listening) await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * Listens on a port below the kernel's ephemeral range. A cut proxy gives its port up and
 * takes it again on restore; a port from the ephemeral range (what listen(0) picks) could be
 * taken meanwhile as the local port of any outgoing connection or by another test's
 * listen(0), and the restore would fail. Below that range only another proxy picking the same
 * port at random could take it.
 */
async function listenOnReservedPort(listen: (port: number) => Promise<void>): Promise<number> {
  const below = ephemeralRangeStart();
  const first = 10_000;
  for (let attempt = 1; ; attempt++) {
    const port = first + Math.floor(Math.random() * (below - first));
    try {
      await listen(port);
      return port;
    } catch (error) {
      if ((error as { code?: unknown }).code !== "EADDRINUSE" || attempt >= 50) throw error;
    }
  }
}

/** The first port of the kernel's ephemeral range (Linux's default when it cannot be read). */
function ephemeralRangeStart(): number {
  try {
    const [low] = readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/).map(Number);
    return low !== undefined && Number.isInteger(low) && low > 11_000 ? low : 32_768;
  } catch {
    return 32_768;
  }
}

/** host and port of a URL such as postgres://user@127.0.0.1:5432/db, with the default port filled in. */
export function endpointOf(url: string, defaultPort: number): { host: string; port: number } {
  const parsed = new URL(url);
  return { host: parsed.hostname, port: Number(parsed.port || defaultPort) };
}

/** The same URL with host and port replaced by the proxy's. */
export function throughProxy(url: string, proxy: TcpProxy): string {
  const parsed = new URL(url);
  parsed.hostname = "127.0.0.1";
  parsed.port = String(proxy.port);
  return parsed.toString();
}
