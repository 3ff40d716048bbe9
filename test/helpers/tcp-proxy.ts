// A TCP proxy on loopback in front of a real service, that a test can cut (every open
// connection dropped, new ones refused) and restore: a dependency outage without stopping
// the machine's PostgreSQL or Redis, which other test files are using.
import { createConnection, createServer, type Socket } from "node:net";
import type { AddressInfo } from "node:net";

export type TcpProxy = {
  port: number;
  cut: () => void;
  restore: () => void;
  close: () => Promise<void>;
};

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const open = new Set<Socket>();
  let down = false;
  const track = (socket: Socket) => {
    open.add(socket);
    socket.once("close", () => open.delete(socket));
  };
  const server = createServer((client) => {
    if (down) {
      client.destroy();
      return;
    }
    const upstream = createConnection(target);
    track(client);
    track(upstream);
    client.pipe(upstream).pipe(client);
    client.on("error", () => upstream.destroy());
    upstream.on("error", () => client.destroy());
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as AddressInfo).port,
    cut: () => {
      down = true;
      for (const socket of open) socket.destroy();
    },
    restore: () => {
      down = false;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of open) socket.destroy();
        server.close(() => resolve());
      }),
  };
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
