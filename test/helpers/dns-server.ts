// A name server on loopback (UDP), for tests of webhook host resolution: per name, A records,
// NXDOMAIN, or no answer at all (a name server that never answers, as a hostile domain's may);
// A records may be given late (a slow name server: a lookup still in flight while a test acts).
import { createSocket, type RemoteInfo } from "node:dgram";
import type { AddressInfo } from "node:net";

export type DnsAnswer = { a: string[]; delayMs?: number } | "nxdomain" | "silent";

export type DnsServer = {
  /** `127.0.0.1:<port>`, for Resolver.setServers, or a resolv.conf's nameserver line (c-ares reads a port there). */
  address: string;
  /** The names asked, in order (one per query: A and AAAA each count). */
  queries: string[];
  close: () => Promise<void>;
};

const TYPE_A = 1;
const NXDOMAIN = 3;

export async function startDnsServer(answerFor: (name: string) => DnsAnswer): Promise<DnsServer> {
  const socket = createSocket("udp4");
  const queries: string[] = [];
  const late = new Set<NodeJS.Timeout>();
  socket.on("message", (query: Buffer, peer: RemoteInfo) => {
    const { name, end } = readName(query, 12);
    const type = query.readUInt16BE(end);
    queries.push(name);
    const answer = answerFor(name);
    if (answer === "silent") return;
    const question = query.subarray(12, end + 4);
    const records = answer !== "nxdomain" && type === TYPE_A ? answer.a : [];
    const header = Buffer.alloc(12);
    header.writeUInt16BE(query.readUInt16BE(0), 0); // the query's id
    header.writeUInt16BE(0x8180 | (answer === "nxdomain" ? NXDOMAIN : 0), 2); // a response, recursion desired and available
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(records.length, 6);
    const answers = records.map((ip) => {
      const record = Buffer.alloc(16);
      record.writeUInt16BE(0xc00c, 0); // the name: a pointer to the question's
      record.writeUInt16BE(TYPE_A, 2);
      record.writeUInt16BE(1, 4); // class IN
      record.writeUInt32BE(60, 6); // TTL
      record.writeUInt16BE(4, 10);
      ip.split(".").forEach((octet, i) => record.writeUInt8(Number(octet), 12 + i));
      return record;
    });
    const send = () => socket.send(Buffer.concat([header, question, ...answers]), peer.port, peer.address);
    const delayMs = answer !== "nxdomain" ? answer.delayMs : undefined;
    if (delayMs === undefined) return send();
    const timer = setTimeout(() => (late.delete(timer), send()), delayMs);
    late.add(timer);
  });
  await new Promise<void>((resolve) => socket.bind(0, "127.0.0.1", resolve));
  const { port } = socket.address() as AddressInfo;
  return {
    address: `127.0.0.1:${port}`,
    queries,
    close: () => {
      for (const timer of late) clearTimeout(timer);
      return new Promise<void>((resolve) => socket.close(() => resolve()));
    },
  };
}

/** The dotted name at `offset` (a query's question holds no compression pointers) and where it ends. */
function readName(message: Buffer, offset: number): { name: string; end: number } {
  const labels: string[] = [];
  let at = offset;
  while (message[at]! > 0) {
    const length = message[at]!;
    labels.push(message.toString("ascii", at + 1, at + 1 + length));
    at += 1 + length;
  }
  return { name: labels.join(".").toLowerCase(), end: at + 1 };
}
