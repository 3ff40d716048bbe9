// Requests the server refuses whatever their route, answered as problem+json by the admission
// hook in app.ts, after the token and scope checks (DESIGN.md section 3: a request without a
// valid token is a 401 whatever else is wrong with it), before the rate limit counts them.
//
// While the app drains on shutdown. app.close() stops new connections and waits for the
// requests in flight, but a request can still arrive on a connection that is open: pipelined,
// or sent on a busy keep-alive connection. Fastify's own answer to it (return503OnClosing)
// is written before any hook runs: plain JSON, no Retry-After, no X-Request-Id, and before
// authentication. We answer it ourselves instead, as every other 503: problem+json `unavailable`
// with Retry-After, and Connection: close, so that the client's retry opens a new connection,
// which reaches a process that is up. Serving it instead would also have been safe (the
// drain is bounded by src/bin/api.ts), but it would stretch the drain with work begun after
// the stop was asked for, on dependencies that are about to be closed; a refusal that says
// "retry" is what a load balancer and our clients (retries of 503 honour Retry-After) expect.
//
// An Expect header other than 100-continue. Node answers it itself (a bare 417, no body, no
// X-Request-Id, before authentication) unless the server listens for 'checkExpectation'.
// Here the listener hands the request to Fastify like any other, and it is refused once
// admitted: a 400 validation_failed. Not a 417: DESIGN.md section 3's closed list has no code
// for it (problem.ts: a new kind of failure takes the code of its status), and every operation
// of the OpenAPI document lists a 400, none a 417. RFC 9110 section 10.1.1 allows it: a server
// MAY answer 417 to an expectation it cannot meet.
import type { IncomingMessage } from "node:http";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { ProblemError } from "./problem.ts";

/** Seconds a client waits before sending again a request refused while this process drains. */
export const DRAINING_RETRY_AFTER_SECONDS = 1;

export type ServerRefusal = (request: FastifyRequest) => ProblemError | undefined;

export function createServerRefusals(app: FastifyInstance): ServerRefusal {
  let draining = false;
  // preClose runs once Fastify has begun to close (its router then marks new requests as
  // arriving while closing), before the server stops listening: from here on, refuse.
  app.addHook("preClose", (done) => {
    draining = true;
    done();
  });

  const unmetExpectations = new WeakSet<IncomingMessage>();
  app.server.on("checkExpectation", (request: IncomingMessage, response) => {
    unmetExpectations.add(request);
    // What Node does itself for 100-continue when nobody listens for checkContinue.
    app.server.emit("request", request, response);
  });

  return (request) => {
    if (draining) {
      return new ProblemError("unavailable", "the server is shutting down; send the request again, on a new connection", {
        headers: { "retry-after": String(DRAINING_RETRY_AFTER_SECONDS), connection: "close" },
      });
    }
    if (unmetExpectations.has(request.raw)) {
      const message = "asks for an expectation this server cannot meet; send no Expect, or Expect: 100-continue";
      // Closed: a client that waits for an interim answer before it sends its body would
      // otherwise leave the connection waiting for a body that never comes.
      return new ProblemError("validation_failed", `headers.expect ${message}`, {
        errors: [{ path: "headers.expect", message }],
        headers: { connection: "close" },
      });
    }
    return undefined;
  };
}
