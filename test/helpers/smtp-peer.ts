// A real SMTP server on loopback (the smtp-server package): accepts anything unless told to
// answer a recipient or a sender with an error code, and records every message raw. parseMessage reads
// what the tests need (headers, text and HTML parts) without a mail parsing library.
import type { AddressInfo } from "node:net";
import { SMTPServer } from "smtp-server";

export type ReceivedMail = { from: string; to: string[]; raw: string };

export type SmtpPeer = {
  url: string;
  port: number;
  messages: ReceivedMail[];
  /** The user names of every login tried, accepted or not. */
  logins: string[];
  /** The next RCPT TO for `address` is answered with `code` (451 busy, 550 unknown, …), once per call. */
  rejectRecipient: (address: string, code: number, message?: string) => void;
  /** From now on, MAIL FROM `address` is answered with `code` (553 "not owned by user"…), until acceptSender. */
  refuseSender: (address: string, code: number, message: string) => void;
  /** From now on, MAIL FROM `address` is accepted again. */
  acceptSender: (address: string) => void;
  /** From now on, logins with these credentials are accepted (and only these, when the peer requires a login). */
  acceptLogin: (user: string, password: string) => void;
  close: () => Promise<void>;
};

/**
 * `login`: the peer requires a login and accepts only this one (535 otherwise); without it, no
 * login is needed. `host`: the address it listens on (127.0.0.1 unless told). `port`: its port
 * (any free one unless told: a peer started again where a closed one listened).
 */
export async function startSmtpPeer(options: { login?: { user: string; password: string }; host?: string; port?: number } = {}): Promise<SmtpPeer> {
  const host = options.host ?? "127.0.0.1";
  const messages: ReceivedMail[] = [];
  const logins: string[] = [];
  const rejections = new Map<string, Array<{ code: number; message: string }>>();
  const refusedSenders = new Map<string, { code: number; message: string }>();
  let login = options.login;

  const server = new SMTPServer({
    authOptional: !login,
    // Logins over plain text are fine on loopback, and what the tests' smtp:// URLs use.
    allowInsecureAuth: true,
    disabledCommands: ["STARTTLS"],
    logger: false,
    onAuth(auth, _session, callback) {
      logins.push(auth.username ?? "");
      if (login && auth.username === login.user && auth.password === login.password) {
        callback(null, { user: auth.username });
        return;
      }
      callback(new Error("Invalid username or password"));
    },
    onMailFrom(address, _session, callback) {
      const refusal = refusedSenders.get(address.address.toLowerCase());
      if (refusal) {
        callback(Object.assign(new Error(refusal.message), { responseCode: refusal.code }));
        return;
      }
      callback();
    },
    onRcptTo(address, _session, callback) {
      const next = rejections.get(address.address.toLowerCase())?.shift();
      if (next) {
        callback(Object.assign(new Error(next.message), { responseCode: next.code }));
        return;
      }
      callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.on("end", () => {
        messages.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
          to: session.envelope.rcptTo.map((rcpt) => rcpt.address),
          raw: Buffer.concat(chunks).toString("utf8"),
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const { port } = server.server.address() as AddressInfo;

  return {
    url: `smtp://${host}:${port}`,
    port,
    messages,
    logins,
    rejectRecipient: (address, code, message = code < 500 ? "mailbox busy, try again later" : "no such mailbox") => {
      const key = address.toLowerCase();
      rejections.set(key, [...(rejections.get(key) ?? []), { code, message }]);
    },
    refuseSender: (address, code, message) => {
      refusedSenders.set(address.toLowerCase(), { code, message });
    },
    acceptSender: (address) => {
      refusedSenders.delete(address.toLowerCase());
    },
    acceptLogin: (user, password) => {
      login = { user, password };
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export type ParsedMail = {
  headers: Map<string, string>;
  subject: string;
  text: string | undefined;
  html: string | undefined;
};

/** Enough of RFC 5322/2045/2047 for messages that nodemailer writes. */
export function parseMessage(raw: string): ParsedMail {
  const { headers, body } = splitEntity(raw);
  const parts = leafParts(headers, body);
  const find = (type: string) => parts.find((part) => (part.headers.get("content-type") ?? "").startsWith(type));
  const decodePart = (part: { headers: Map<string, string>; body: string } | undefined) =>
    part ? decodeBody(part.body, part.headers.get("content-transfer-encoding") ?? "7bit") : undefined;
  return {
    headers,
    subject: decodeWords(headers.get("subject") ?? ""),
    text: decodePart(find("text/plain")),
    html: decodePart(find("text/html")),
  };
}

function splitEntity(raw: string): { headers: Map<string, string>; body: string } {
  const normalised = raw.replace(/\r\n/g, "\n");
  const end = normalised.indexOf("\n\n");
  const head = end === -1 ? normalised : normalised.slice(0, end);
  const body = end === -1 ? "" : normalised.slice(end + 2);
  const headers = new Map<string, string>();
  for (const line of head.replace(/\n[ \t]+/g, " ").split("\n")) {
    const colon = line.indexOf(":");
    if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  return { headers, body };
}

function leafParts(headers: Map<string, string>, body: string): Array<{ headers: Map<string, string>; body: string }> {
  const type = headers.get("content-type") ?? "text/plain";
  const boundary = /boundary="?([^";]+)"?/i.exec(type)?.[1];
  if (!type.startsWith("multipart/") || !boundary) return [{ headers, body }];
  return body
    .split(`--${boundary}`)
    .slice(1)
    .filter((chunk) => !chunk.startsWith("--"))
    .flatMap((chunk) => {
      const part = splitEntity(chunk.replace(/^\n/, ""));
      return leafParts(part.headers, part.body);
    });
}

function decodeBody(body: string, encoding: string): string {
  const trimmed = body.replace(/\n$/, "");
  switch (encoding.toLowerCase()) {
    case "base64":
      return Buffer.from(trimmed.replace(/\s+/g, ""), "base64").toString("utf8");
    case "quoted-printable":
      return decodeQuotedPrintable(trimmed);
    default:
      return trimmed;
  }
}

function decodeQuotedPrintable(text: string): string {
  const bytes: number[] = [];
  const unfolded = text.replace(/=\n/g, "");
  for (let i = 0; i < unfolded.length; i++) {
    const c = unfolded[i]!;
    if (c === "=" && /^[0-9A-F]{2}$/i.test(unfolded.slice(i + 1, i + 3))) {
      bytes.push(parseInt(unfolded.slice(i + 1, i + 3), 16));
      i += 2;
    } else {
      bytes.push(...Buffer.from(c, "utf8"));
    }
  }
  return Buffer.from(bytes).toString("utf8");
}

/** RFC 2047 encoded words (=?UTF-8?Q?…?= and =?UTF-8?B?…?=), joined when adjacent. */
function decodeWords(value: string): string {
  return value
    .replace(/\?=\s+=\?/g, "?==?")
    .replace(/=\?([^?]+)\?([QB])\?([^?]*)\?=/gi, (_match, _charset: string, kind: string, data: string) =>
      kind.toUpperCase() === "B"
        ? Buffer.from(data, "base64").toString("utf8")
        : decodeQuotedPrintable(data.replace(/_/g, " ")),
    );
}
