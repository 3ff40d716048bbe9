// What runs once a response is sent: the request log line and the duration histogram. Every
// routed request gets there through an onResponse hook; a URL the router refused (bad
// percent-encoding, a path parameter too long) is answered by frameworkErrors, which Fastify
// calls with no hook around it, so that path runs the same observers itself.
import type { FastifyReply, FastifyRequest } from "fastify";

export type CompletedRequestObserver = (request: FastifyRequest, reply: FastifyReply, ms: number) => void;

export type CompletedRequests = {
  /** Adds an observer of every response sent. */
  observe(observer: CompletedRequestObserver): void;
  /** Runs the observers when `reply` is sent: for a reply no onResponse hook will see. */
  observeUnrouted(request: FastifyRequest, reply: FastifyReply): void;
};

export function trackCompletedRequests(app: {
  addHook(name: "onResponse", hook: (request: FastifyRequest, reply: FastifyReply, done: () => void) => void): unknown;
}): CompletedRequests {
  const observers: CompletedRequestObserver[] = [];
  const run = (request: FastifyRequest, reply: FastifyReply, ms: number) => {
    for (const observer of observers) observer(request, reply, ms);
  };
  app.addHook("onResponse", (request, reply, done) => {
    run(request, reply, reply.elapsedTime);
    done();
  });
  return {
    observe: (observer) => void observers.push(observer),
    observeUnrouted: (request, reply) => {
      const started = performance.now();
      reply.raw.once("finish", () => run(request, reply, performance.now() - started));
    },
  };
}
