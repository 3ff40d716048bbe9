// HTTP/1.1 over a plain socket, for what a client library hides: several requests on one
// kept-alive connection, pipelined, and headers such as Expect sent as written.
import { connect, type Socket } from "node:net";

/** One answer read off the wire; header names in lower case, as app.inject() gives them. */
export type RawAnswer = { statusCode: number; headers: Record<string, string>; body: string };

export type RawConnection = {
  socket: Socket;
  /** Writes one request: a body is sent with its Content-Length. */
  send: (method: string, path: string, headers?: Record<string, string>, body?: string) => void;
  /** Every answer received, once the server has closed the connection. */
  answers: Promise<RawAnswer[]>;
};

export async function openConnection(port: number): Promise<RawConnection> {
  const socket = connect(port, "127.0.0.1");
  let received: Buffer = Buffer.alloc(0);
  socket.on("data", (chunk: Buffer) => (received = Buffer.concat([received, chunk])));
  const answers = new Promise<RawAnswer[]>((resolve, reject) => {
    socket.on("close", () => resolve(parseAnswers(received)));
    socket.on("error", reject);
  });
  await new Promise<void>((resolve, reject) => socket.once("connect", resolve).once("error", reject));
  return {
    socket,
    send: (method, path, headers = {}, body) => {
      const lines = [`${method} ${path} HTTP/1.1`, "Host: api.example", ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`)];
      if (body !== undefined) lines.push(`Content-Length: ${Buffer.byteLength(body)}`);
      socket.write(`${lines.join("\r\n")}\r\n\r\n${body ?? ""}`);
    },
    answers,
  };
}

/** Answers one after another, each with a Content-Length or chunked (without trailers). */
export function parseAnswers(bytes: Buffer): RawAnswer[] {
  const answers: RawAnswer[] = [];
  let rest = bytes;
  while (rest.length > 0) {
    const end = rest.indexOf("\r\n\r\n");
    if (end < 0) throw new Error(`an answer without the end of its headers: ${rest.toString("latin1").slice(0, 300)}`);
    const [statusLine, ...headerLines] = rest.subarray(0, end).toString("latin1").split("\r\n");
    const statusCode = Number(/^HTTP\/1\.1 (\d{3})/.exec(statusLine ?? "")?.[1]);
    const headers: Record<string, string> = {};
    for (const line of headerLines) {
      const colon = line.indexOf(":");
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    rest = rest.subarray(end + 4);
    let body: Buffer = Buffer.alloc(0);
    if (headers["transfer-encoding"] === "chunked") {
      for (;;) {
        const lineEnd = rest.indexOf("\r\n");
        const size = parseInt(rest.subarray(0, lineEnd).toString("latin1"), 16);
        body = Buffer.concat([body, rest.subarray(lineEnd + 2, lineEnd + 2 + size)]);
        rest = rest.subarray(lineEnd + 2 + size + 2);
        if (size === 0 || Number.isNaN(size)) break;
      }
    } else {
      const length = Number(headers["content-length"] ?? 0);
      body = rest.subarray(0, length);
      rest = rest.subarray(length);
    }
    answers.push({ statusCode, headers, body: body.toString("utf8") });
  }
  return answers;
}
