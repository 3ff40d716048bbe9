// A Twilio stand-in on loopback: Stoplight Prism serving Twilio's own Messages API
// description (test/fixtures/twilio), so every request our SDK client sends is validated
// against Twilio's contract; valid ones get a 201 Message, malformed ones a 422. A thin
// front passes every request to Prism and, for a From or To number a test told it to refuse,
// turns Prism's 201 into Twilio's error answer: Twilio, too, checks the request first.
import { spawn, type ChildProcess } from "node:child_process";
import { createServer as createHttpServer, request, type IncomingHttpHeaders, type IncomingMessage, type Server } from "node:http";
import { createServer, type AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const PRISM = `${ROOT}node_modules/.bin/prism`;
const SPEC = `${ROOT}test/fixtures/twilio/messages-api.json`;
const START_TIMEOUT_MS = 30_000;

export const TEST_TWILIO = {
  accountSid: "AC0123456789abcdef0123456789abcdef",
  authToken: "test-auth-token",
  from: "+15005550006",
} as const;

/** An error as Twilio answers it: HTTP status, Twilio error code, message. */
export type TwilioErrorAnswer = { status: number; code: number; message: string };

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
  const front = await startFront(port, refusedSenders, refusedRecipients);

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
    close: async () => {
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

/** The front on loopback: each request goes to Prism; a valid one from a refused sender (or to a refused recipient) gets its error. */
async function startFront(
  prismPort: number,
  refusedSenders: ReadonlyMap<string, TwilioErrorAnswer>,
  refusedRecipients: ReadonlyMap<string, TwilioErrorAnswer>,
): Promise<Server> {
  const front = createHttpServer((incoming, outgoing) => {
    void (async () => {
      const body = await readAll(incoming);
      const answer = await forward(prismPort, incoming, body);
      const form = new URLSearchParams(body.toString("utf8"));
      const refusal = refusedSenders.get(form.get("From") ?? "") ?? refusedRecipients.get(form.get("To") ?? "");
      const { status, headers, body: answerBody } = refusal && answer.status === 201 ? twilioError(refusal) : answer;
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

/** Twilio's error body (what the SDK's RestException reads). */
function twilioError(error: TwilioErrorAnswer): Answer {
  const body = { code: error.code, message: error.message, more_info: `https://www.twilio.com/docs/errors/${error.code}`, status: error.status };
  return { status: error.status, headers: { "content-type": "application/json" }, body: Buffer.from(JSON.stringify(body)) };
}

async function readAll(stream: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
