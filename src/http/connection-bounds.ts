// How long a client may hold a connection to the API without sending or reading what it should.
// Fastify 5 leaves Node's request timeout off (0), so a client that declared a large body and sent
// it a byte at a time held its connection for as long as it liked; one with no token did too,
// after its 401, because Node reads a kept-alive request's body to its end before the next
// request. Thousands of such connections, from anyone, use up the process's file descriptors,
// and with them its PostgreSQL and Redis sockets. Each phase of a connection has a bound here:
//
// - receiving a request (line, headers, body): REQUEST_RECEIVE_TIMEOUT, its headers alone
//   HEADERS_TIMEOUT_MS; past either Node answers 400 and closes (error-handler.ts answerClientError);
// - working on it: REQUEST_TIMEOUT (request-deadline.ts), past which it is answered 503;
// - nothing moving either way (a client that stopped reading its answer): the idle bound below;
// - kept alive between requests: KEEP_ALIVE_TIMEOUT_MS;
// - answered before its body arrived (a 401, 403, 413, 415, 429): closed, see closeAfterEarlyAnswers.
import type { IncomingMessage, Server } from "node:http";
import type { Socket } from "node:net";
import type { FastifyHttpOptions, FastifyInstance } from "fastify";
import type { Config } from "../config.ts";

/**
 * An honest client sends its request line and headers (16 KiB at most, Node's limit) at once;
 * only one that means to hold the connection takes longer. Node's default is 60 s.
 */
export const HEADERS_TIMEOUT_MS = 20_000;
/**
 * Above the 60 s idle timeout of the usual load balancers (AWS ALB's default): the balancer, not
 * this process, closes an idle kept-alive connection, so it never sends a request on one that
 * this process is closing at that moment (a 502). Fastify's default.
 */
export const KEEP_ALIVE_TIMEOUT_MS = 72_000;
/**
 * How often Node looks for requests past their receive bounds: a bound is kept to within this.
 * Node's default, 30 s, let a 60 s headers bound hold a connection for up to 90 s.
 */
export const TIMEOUT_CHECK_INTERVAL_MS = 2_000;
/**
 * How long a connection answered before its body arrived still takes in (and drops) what the
 * client sends, before it is cut. A client that writes its whole body before it reads
 * (Python's http.client, requests) met a connection already closed and got EPIPE or ECONNRESET
 * instead of the 401 that says why; 5 s let a 10 MiB body through at about 17 Mbit/s, and one that
 * trickles in holds the connection no longer than that.
 */
export const EARLY_ANSWER_LINGER_MS = 5_000;
/** Between the end of a request's receive bound or deadline and the idle bound's cut. */
const IDLE_MARGIN_MS = 5_000;

type Bounds = Pick<Config, "requestReceiveTimeoutMs" | "requestTimeoutMs">;

/** The Fastify options that set these bounds on its HTTP server. */
export function connectionOptions(bounds: Bounds) {
  const requestTimeout = bounds.requestReceiveTimeoutMs;
  return {
    requestTimeout,
    keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
    // A socket on which nothing moves: a client that stopped reading its answer would hold it,
    // and the answer's buffer, for good. Never shorter than a request may take to arrive or to
    // be worked on (it would cut one that either bound still allows, with no answer at all).
    connectionTimeout: Math.max(requestTimeout, bounds.requestTimeoutMs) + IDLE_MARGIN_MS,
    // Given to Node's constructor, not set afterwards as Fastify sets requestTimeout: Node checks
    // the whole request against the larger of the two timeouts, so the headers' must be the
    // smaller, or a 60 s default would stretch a shorter REQUEST_RECEIVE_TIMEOUT to 60 s.
    http: {
      requestTimeout,
      headersTimeout: Math.min(HEADERS_TIMEOUT_MS, requestTimeout),
      connectionsCheckingInterval: TIMEOUT_CHECK_INTERVAL_MS,
    },
  } satisfies Partial<FastifyHttpOptions<Server>>;
}

/**
 * An answer sent while the request's body is still arriving (a 401 or 403 from the admission
 * hook, Fastify's 413 or 415, a 429) says `Connection: close`, and the connection is cut soon
 * after (EARLY_ANSWER_LINGER_MS) instead of reading the rest of the body, however slowly it
 * comes. A body that has arrived whole by the time the answer goes out keeps the connection.
 */
export function closeAfterEarlyAnswers(app: FastifyInstance): void {
  app.addHook("onSend", (request, reply, payload, done) => {
    const raw = request.raw;
    if (raw.complete || !declaresBody(raw)) return done(null, payload);
    // An answer given while Node handles the request's headers comes before it has parsed the
    // rest of the same packet: a small body sent with its headers is there one turn later.
    setImmediate(() => {
      if (!raw.complete) {
        reply.header("connection", "close");
        lingerBeforeClosing(raw.socket);
      }
      done(null, payload);
    });
  });
}

function declaresBody(request: IncomingMessage): boolean {
  return request.headers["transfer-encoding"] !== undefined || Number(request.headers["content-length"] ?? 0) > 0;
}

/**
 * Node ends a connection whose answer said `Connection: close` with socket.destroySoon(): it
 * closes the socket as soon as the answer is written. Bytes of the body that arrive after that
 * make the kernel reset the connection, and a client still writing them gets the reset, not
 * the answer (RFC 9112 section 9.6 asks a server to close in stages for this reason). Here the
 * socket is half-closed instead (the answer, then FIN), what arrives meanwhile is still read
 * and dropped, and it is destroyed once the client closes its side or the linger has passed.
 */
function lingerBeforeClosing(socket: Socket): void {
  socket.destroySoon = () => {
    socket.end();
    const cut = setTimeout(() => socket.destroy(), EARLY_ANSWER_LINGER_MS);
    socket.once("close", () => clearTimeout(cut));
  };
}
