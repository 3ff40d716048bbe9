// Every request is answered within REQUEST_TIMEOUT of the moment its handler starts (its body
// received and validated: a slow upload is the client's time, not ours, bounded apart by
// REQUEST_RECEIVE_TIMEOUT, see connection-bounds.ts), give or take a quarter second
// (sweepIntervalMs). A PostgreSQL that stops answering on open connections — a partition, a
// frozen primary, a long lock wait — raises no error: a statement waits as long as its TCP
// connection lives, a quarter of an hour or more, and so did the request. Past the deadline the
// caller gets the 503 that an unreachable dependency gets. The handler cannot be stopped
// mid-statement and runs on to its end: what it answers or throws then has nobody to go to, and
// is dropped (at debug) instead of each late request logging Fastify's "Reply was already sent"
// or "Promise errored".
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteHandlerMethod } from "fastify";
import { createRepeatedWarning } from "../log-repeats.ts";
import type { Logger } from "../logger.ts";
import { sendProblem } from "./error-handler.ts";

/** As long as any other 503 asks a client to wait. */
const RETRY_AFTER_SECONDS = "5";

export type DeadlineOptions = {
  /**
   * Called when the handler of a request answered 503 at its deadline has settled: a write may
   * have been carried out after all, and what caches reads must learn of it (the 503 did not).
   */
  onLateSettle?: (request: FastifyRequest) => void;
};

export function registerRequestDeadline(app: FastifyInstance, deadlineMs: number, options: DeadlineOptions = {}): void {
  // Requests answered at their deadline: while they last, their handlers are still running.
  const answeredAtDeadline = new WeakSet<FastifyRequest>();
  // While PostgreSQL hangs every request hits the deadline: one warning a minute, the rest at debug.
  const warn = createRepeatedWarning(app.log as Logger, "request deadline passed: answered 503");
  const deadlineError = Object.assign(new Error(`no answer within ${deadlineMs} ms`), { code: "REQUEST_DEADLINE" });

  const answerAtDeadline = (request: FastifyRequest, reply: FastifyReply) => {
    // Answered meanwhile, or already streaming its answer, or the client has gone.
    if (reply.sent || reply.raw.headersSent || reply.raw.destroyed) return;
    answeredAtDeadline.add(request);
    warn(deadlineError, { requestId: request.id, method: request.method, route: request.routeOptions.url });
    sendProblem(
      reply,
      "unavailable",
      `no answer within ${deadlineMs / 1000} s (a backing service is slow or not answering); retry shortly: the request may still be carried out`,
      { headers: { "retry-after": RETRY_AFTER_SECONDS } },
    );
    // What the handler sends later, by returning or through reply.send, goes nowhere.
    reply.send = () => reply;
  };

  // Requests whose handler runs, by when their deadline passes. All have the same deadline, so
  // the order they were added in is the order they fall due: a sweep stops at the first one not
  // due yet. One unref'd interval sweeps them all, instead of a timer and a 'close' listener
  // for each request, which every request paid for and nearly none used.
  const running = new Map<FastifyRequest, { reply: FastifyReply; due: number }>();
  const sweep = setInterval(() => {
    const now = performance.now();
    for (const [request, { reply, due }] of running) {
      if (due > now) break;
      running.delete(request);
      answerAtDeadline(request, reply);
    }
  }, sweepIntervalMs(deadlineMs));
  sweep.unref();
  app.addHook("onClose", (_instance, done) => {
    clearInterval(sweep);
    done();
  });
  // An answered request leaves at once. One whose client left before its answer (Fastify runs
  // no onResponse for it) stays until its deadline: the sweep drops it, finding the connection gone.
  app.addHook("onResponse", (request, _reply, done) => {
    running.delete(request);
    done();
  });

  // The deadline runs from the moment the handler starts; a handler that throws after its 503
  // would be logged by Fastify at error, once per request.
  app.addHook("onRoute", (route) => {
    const handler = route.handler;
    // A route whose retry would repeat its write rather than find it done opts out (deadline: false).
    const timed = (route.config as { deadline?: boolean } | undefined)?.deadline !== false;
    route.handler = function (this: FastifyInstance, request, reply) {
      if (timed) running.set(request, { reply, due: performance.now() + deadlineMs });
      const result = handler.call(this, request, reply) as unknown;
      if (!isThenable(result)) return result;
      return result.then(
        (value) => {
          if (answeredAtDeadline.has(request)) options.onLateSettle?.(request);
          return value;
        },
        (error: unknown) => {
          if (!answeredAtDeadline.has(request)) throw error;
          options.onLateSettle?.(request);
          request.log.debug({ err: error }, "a request answered 503 at its deadline failed afterwards");
          return undefined;
        },
      );
    } as RouteHandlerMethod;
  });
}

/** A deadline is met to within a quarter of itself, and a quarter second at most. */
function sweepIntervalMs(deadlineMs: number): number {
  return Math.max(1, Math.min(250, Math.floor(deadlineMs / 4)));
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as { then?: unknown } | null)?.then === "function";
}
