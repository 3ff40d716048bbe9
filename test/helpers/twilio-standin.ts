// A Twilio stand-in on loopback: Stoplight Prism serving Twilio's own Messages API
// description (test/fixtures/twilio), so every request our SDK client sends is validated
// against Twilio's contract; valid ones get a 201 Message, malformed ones a 422. A thin
// front passes every request to Prism and, for a From or To number a test told it to refuse,
// turns Prism's 201 into Twilio's error answer: Twilio, too, checks the request first.
// Prism answers every message with the description's example; the front gives each accepted
// message a sid of its own, as Twilio does, and when the message named a StatusCallback it then
// posts the callbacks Twilio would (form-encoded, signed with X-Twilio-Signature over the URL
// and the sorted parameters with the auth token): `sent`, then `delivered`, or what a test
// told it the carrier does with messages to a number.
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createServer as createHttpServer, request, type IncomingHttpHeaders, type IncomingMessage, type Server } from "node:http";
import { createServer, type AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import twilio from "twilio";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const PRISM = `${ROOT}node_modules/.bin/prism`;
const SPEC = `${ROOT}test/fixtures/twilio/messages-api.json`;
const START_TIMEOUT_MS = 30_000;

export const TEST_TWILIO = {
  accountSid: "AC0123456789abcdef0123456789abcdef",
  authToken: "test-auth-token",
  from: "+15005550006",
} as const;

/** The TWILIO_* settings of a deployment whose Twilio is at `baseUrl` (the stand-in, or a proxy in front of it). */
export function twilioSettings(baseUrl: string, from: string = TEST_TWILIO.from): Record<string, string> {
  return { TWILIO_ACCOUNT_SID: TEST_TWILIO.accountSid, TWILIO_AUTH_TOKEN: TEST_TWILIO.authToken, TWILIO_FROM: from, TWILIO_BASE_URL: baseUrl };
}

/**
 * An error as Twilio answers it: HTTP status, Twilio error code, message; and any headers it
 * sends with it (a 429 or 503's `retry-after`).
 */
export type TwilioErrorAnswer = { status: number; code: number; message: string; headers?: Readonly<Record<string, string>> };

/** A status Twilio reports for a message after taking it (what the carrier did): MessageStatus, and ErrorCode with a failure. */
export type CarrierReport = { status: string; errorCode?: number };

/** What the carrier does with a message unless a test says otherwise. */
export const DELIVERED_REPORTS: readonly CarrierReport[] = [{ status: "sent" }, { status: "delivered" }];

/** A message the stand-in accepted (201); `body`: its text, as the SDK sent it. */
export type AcceptedMessage = { sid: string; to: string; from: string; body: string; statusCallback: string | undefined };

/** A status callback the stand-in posted, and how it was answered. */
export type PostedCallback = { url: string; params: Record<string, string>; answer: number };

/** How the stand-in signs a callback: Twilio's signature by default, a given header value, or none at all. */
export type CallbackSigning = { signature?: string | null };

/** How long after accepting a message the stand-in posts its first status (Twilio's come seconds later). */
const FIRST_CALLBACK_DELAY_MS = 150;

export type TwilioStandin = {
  baseUrl: string;
  /** Prism's log so far: one line per validation step of every request. */
  log: () => string;
  /** From now on, every valid message from `from` is answered with `error` instead of a 201, until acceptSender. */
  refuseSender: (from: string, error: TwilioErrorAnswer) => void;
  /** From now on, messages from `from` are accepted again. */
  acceptSender: (from: string) => void;
  /** From now on, every valid message to `to` is answered with `error` (21408 region not enabled…), until acceptRecipient. */
  refuseRecipient: (to: string, error: TwilioErrorAnswer) => void;
  /** From now on, messages to `to` are accepted again. */
  acceptRecipient: (to: string) => void;
  /** From now on, the carrier reports these statuses, in this order, for messages to `to` (DELIVERED_REPORTS otherwise). */
  carrierReportsFor: (to: string, reports: readonly CarrierReport[]) => void;
  /** Every message accepted so far, oldest first. */
  messages: () => AcceptedMessage[];
  /** Every status callback posted so far, in the order they were answered. */
  callbacks: () => PostedCallback[];
  /** Posts one status callback to `url` as Twilio does (signed unless `signing` says otherwise); resolves with the answer's status. */
  postStatusCallback: (url: string, params: Record<string, string>, signing?: CallbackSigning) => Promise<{ status: number; body: string }>;
  close: () => Promise<void>;
};

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export async function startTwilioStandin(): Promise<TwilioStandin> {
  const port = await freePort();
  // Its own process group, so that close() ends Prism and anything it started, and only that.
  const child: ChildProcess = spawn(PRISM, ["mock", "-h", "127.0.0.1", "-p", String(port), SPEC], {
    cwd: ROOT,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
  child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));

  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`Prism did not start within ${START_TIMEOUT_MS} ms:\n${output}`)), START_TIMEOUT_MS);
    const check = () => {
      if (output.includes("Prism is listening")) {
        clearTimeout(timer);
        child.stdout!.off("data", check);
        resolve();
      }
    };
    child.stdout!.on("data", check);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`Prism exited with code ${code} before listening:\n${output}`));
    });
  });

  const refusedSenders = new Map<string, TwilioErrorAnswer>();
  const refusedRecipients = new Map<string, TwilioErrorAnswer>();
  const reportsByRecipient = new Map<string, readonly CarrierReport[]>();
  const accepted: AcceptedMessage[] = [];
  const posted: PostedCallback[] = [];
  const reporting = new Set<Promise<void>>();
  const postStatusCallback = (url: string, params: Record<string, string>, signing: CallbackSigning = {}) =>
    postForm(url, params, signing.signature === undefined ? twilio.getExpectedTwilioSignature(TEST_TWILIO.authToken, url, params) : signing.signature);
  // The statuses of one message, one after the other, as Twilio reports them.
  const report = (message: AcceptedMessage) => {
    const reports = reportsByRecipient.get(message.to) ?? DELIVERED_REPORTS;
    const run = (async () => {
      await new Promise((resolve) => setTimeout(resolve, FIRST_CALLBACK_DELAY_MS));
      for (const { status, errorCode } of reports) {
        const params = statusParams(message, status, errorCode);
        const answer = await postStatusCallback(message.statusCallback!, params).catch(() => ({ status: 0 }));
        posted.push({ url: message.statusCallback!, params, answer: answer.status });
      }
    })();
    reporting.add(run);
    void run.finally(() => reporting.delete(run));
  };
  const onAccepted = (message: AcceptedMessage) => {
    accepted.push(message);
    if (message.statusCallback) report(message);
  };
  const front = await startFront(port, refusedSenders, refusedRecipients, onAccepted);

  return {
    baseUrl: `http://127.0.0.1:${(front.address() as AddressInfo).port}`,
    log: () => output,
    refuseSender: (from, error) => {
      refusedSenders.set(from, error);
    },
    acceptSender: (from) => {
      refusedSenders.delete(from);
    },
    refuseRecipient: (to, error) => {
      refusedRecipients.set(to, error);
    },
    acceptRecipient: (to) => {
      refusedRecipients.delete(to);
    },
    carrierReportsFor: (to, reports) => {
      reportsByRecipient.set(to, reports);
    },
    messages: () => [...accepted],
    callbacks: () => [...posted],
    postStatusCallback,
    close: async () => {
      await Promise.allSettled([...reporting]);
      front.closeAllConnections();
      await new Promise((resolve) => front.close(resolve));
      if (child.exitCode !== null || child.pid === undefined) return;
      const exited = new Promise((resolve) => child.once("exit", resolve));
      process.kill(-child.pid, "SIGTERM");
      await exited;
    },
  };
}

type Answer = { status: number; headers: IncomingHttpHeaders; body: Buffer };

/** Headers that describe one hop's framing, not the answer: the front frames its own. */
const HOP_HEADERS = new Set(["connection", "keep-alive", "transfer-encoding", "content-length"]);

/**
 * The front on loopback: each request goes to Prism; a valid one from a refused sender (or to a
 * refused recipient) gets its error, any other valid one a sid of its own.
 */
async function startFront(
  prismPort: number,
  refusedSenders: ReadonlyMap<string, TwilioErrorAnswer>,
  refusedRecipients: ReadonlyMap<string, TwilioErrorAnswer>,
  onAccepted: (message: AcceptedMessage) => void,
): Promise<Server> {
  const front = createHttpServer((incoming, outgoing) => {
    void (async () => {
      const body = await readAll(incoming);
      const answer = await forward(prismPort, incoming, body);
      const form = new URLSearchParams(body.toString("utf8"));
      const refusal = refusedSenders.get(form.get("From") ?? "") ?? refusedRecipients.get(form.get("To") ?? "");
      const { status, headers, body: answerBody } =
        refusal && answer.status === 201 ? twilioError(refusal) : answer.status === 201 ? accept(answer, form, onAccepted) : answer;
      const kept = Object.fromEntries(Object.entries(headers).filter(([name]) => !HOP_HEADERS.has(name)));
      outgoing.writeHead(status, { ...kept, "content-length": answerBody.length });
      outgoing.end(answerBody);
    })().catch((error: unknown) => {
      outgoing.writeHead(502, { "content-type": "text/plain" });
      outgoing.end(`Twilio stand-in front: ${String(error)}`);
    });
  });
  await new Promise<void>((resolve) => front.listen(0, "127.0.0.1", resolve));
  return front;
}

function forward(prismPort: number, incoming: IncomingMessage, body: Buffer): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const upstream = request(
      { host: "127.0.0.1", port: prismPort, method: incoming.method, path: incoming.url, headers: incoming.headers },
      (response) => {
        readAll(response).then((answerBody) => resolve({ status: response.statusCode ?? 502, headers: response.headers, body: answerBody }), reject);
      },
    );
    upstream.once("error", reject);
    upstream.end(body);
  });
}

/** Prism's 201 made Twilio's: a sid of the message's own (Prism repeats the example's), its To and From. */
function accept(answer: Answer, form: URLSearchParams, onAccepted: (message: AcceptedMessage) => void): Answer {
  const message: AcceptedMessage = {
    sid: `SM${randomBytes(16).toString("hex")}`,
    to: form.get("To") ?? "",
    from: form.get("From") ?? "",
    body: form.get("Body") ?? "",
    statusCallback: form.get("StatusCallback") ?? undefined,
  };
  const resource = JSON.parse(answer.body.toString("utf8")) as Record<string, unknown>;
  const body = { ...resource, sid: message.sid, to: message.to, from: message.from, status: "queued", account_sid: TEST_TWILIO.accountSid };
  onAccepted(message);
  return { ...answer, body: Buffer.from(JSON.stringify(body)) };
}

/** The parameters of Twilio's status callback for a message (ErrorCode only with a failure). */
function statusParams(message: AcceptedMessage, status: string, errorCode: number | undefined): Record<string, string> {
  return {
    AccountSid: TEST_TWILIO.accountSid,
    ApiVersion: "2010-04-01",
    From: message.from,
    MessageSid: message.sid,
    MessageStatus: status,
    SmsSid: message.sid,
    SmsStatus: status,
    To: message.to,
    ...(errorCode === undefined ? {} : { ErrorCode: String(errorCode) }),
  };
}

/** A form POST as Twilio's callbacks come: the signature header unless `signature` is null. */
function postForm(url: string, params: Record<string, string>, signature: string | null): Promise<{ status: number; body: string }> {
  const payload = Buffer.from(new URLSearchParams(params).toString());
  return new Promise((resolve, reject) => {
    const outgoing = request(
      url,
      {
        method: "POST",
        headers: {
          "content-type": "application/x-www-form-urlencoded",
          "content-length": payload.length,
          "user-agent": "TwilioProxy/1.1",
          ...(signature === null ? {} : { "x-twilio-signature": signature }),
        },
      },
      (response) => {
        readAll(response).then((body) => resolve({ status: response.statusCode ?? 0, body: body.toString("utf8") }), reject);
      },
    );
    outgoing.once("error", reject);
    outgoing.end(payload);
  });
}

/** Twilio's error body (what the SDK's RestException reads), with the error's own headers. */
function twilioError(error: TwilioErrorAnswer): Answer {
  const body = { code: error.code, message: error.message, more_info: `https://www.twilio.com/docs/errors/${error.code}`, status: error.status };
  return { status: error.status, headers: { ...error.headers, "content-type": "application/json" }, body: Buffer.from(JSON.stringify(body)) };
}

async function readAll(stream: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
