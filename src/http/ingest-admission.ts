// How many ingest requests one API process stores at once. Concurrent ingest transactions queue
// on each other's row locks (the per-address activity counters every realistic batch touches),
// so more of them at once store no faster: under a flood they only held every connection of the
// pool, each answered in 5–9 s, reads and the readiness probe waited behind them, and requests
// answered 503 at REQUEST_TIMEOUT had often been stored all the same (their retries came back as
// duplicates). So at most `concurrency` store at once; the next ones wait in line, first come
// first served, for a short bounded time; a request that would wait longer, or finds the line
// full, is refused before anything of it is stored, saying so, with a jittered Retry-After so
// that the feeders refused together do not come back together.
//
// The core (createIngestAdmission) is plain counting; applyIngestAdmission puts it in front of
// the ingest routes' handlers.
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteHandlerMethod, RouteOptions } from "fastify";
import type { Config } from "../config.ts";
import { sendProblem } from "./error-handler.ts";

/**
 * How long a request waits for its turn before it is refused. Long enough that a feed which
 * gives up after a few refusals (Helius drops a delivery after its retries) is refused only when
 * the process really cannot keep up, not at every burst: a refusal costs the feed a retry, a
 * wait only time, and a waiting request holds no connection.
 */
export const INGEST_WAIT_MS = 5_000;
/** Requests that may wait in line, per storing slot: bounded, because each holds its parsed body in memory. */
const WAITING_PER_SLOT = 4;
/** Connections of the pool that ingest leaves, by default, to reads (and anything else a request does). */
const CONNECTIONS_LEFT_FOR_READS = 2;

export type AdmissionLimits = {
  /** Requests storing at once. */
  concurrency: number;
  /** Requests waiting for a turn at once; one more is refused at once. */
  queueLength: number;
  /** How long one waits before it is refused. */
  maxWaitMs: number;
};

/** Why a request was refused: the line was full, or its turn did not come within maxWaitMs. */
export type Refusal = "queue_full" | "wait_exceeded";
export const REFUSALS: readonly Refusal[] = ["queue_full", "wait_exceeded"];

export type Admission = { admitted: true; release: () => void } | { admitted: false; reason: Refusal };

export type IngestAdmission = {
  readonly limits: AdmissionLimits;
  /** Resolves once the request may store (release() when it is done, however it ends), or is refused. */
  enter: () => Promise<Admission>;
  storing: () => number;
  waiting: () => number;
  /** Requests refused since the process started, by reason. */
  refused: () => Readonly<Record<Refusal, number>>;
};

/** INGEST_CONCURRENCY unset: all but two of the pool's connections (at least one), so that reads always find one. */
export function defaultIngestConcurrency(databasePoolSize: number): number {
  return Math.max(1, databasePoolSize - CONNECTIONS_LEFT_FOR_READS);
}

export function ingestAdmissionLimits(config: Pick<Config, "databasePoolSize" | "ingestConcurrency">): AdmissionLimits {
  const concurrency = config.ingestConcurrency ?? defaultIngestConcurrency(config.databasePoolSize);
  return { concurrency, queueLength: concurrency * WAITING_PER_SLOT, maxWaitMs: INGEST_WAIT_MS };
}

export function createIngestAdmission(limits: AdmissionLimits): IngestAdmission {
  let storing = 0;
  // Each waiter is handed its turn by the release before it, in order: none jumps the line.
  const line: Array<(admission: Admission) => void> = [];
  const refused: Record<Refusal, number> = { queue_full: 0, wait_exceeded: 0 };

  const refuse = (reason: Refusal): Admission => {
    refused[reason] += 1;
    return { admitted: false, reason };
  };
  const admitted = (): Admission => {
    let released = false;
    return {
      admitted: true,
      release: () => {
        if (released) return;
        released = true;
        const next = line.shift();
        // The slot passes straight to the next in line; storing stays as it is.
        if (next) next(admitted());
        else storing -= 1;
      },
    };
  };

  return {
    limits,
    enter: () => {
      if (storing < limits.concurrency) {
        storing += 1;
        return Promise.resolve(admitted());
      }
      if (line.length >= limits.queueLength) return Promise.resolve(refuse("queue_full"));
      return new Promise<Admission>((resolve) => {
        const turn = (admission: Admission) => {
          clearTimeout(timer);
          resolve(admission);
        };
        const timer = setTimeout(() => {
          const at = line.indexOf(turn);
          if (at >= 0) line.splice(at, 1);
          resolve(refuse("wait_exceeded"));
        }, limits.maxWaitMs);
        timer.unref();
        line.push(turn);
      });
    },
    storing: () => storing,
    waiting: () => line.length,
    refused: () => ({ ...refused }),
  };
}

/** Retry-After of a refusal: 2 to 5 s, drawn for each, so that feeders refused in the same second spread out. */
export function refusalRetryAfterSeconds(random: () => number = Math.random): number {
  return 2 + Math.min(3, Math.floor(random() * 4));
}

export const AT_CAPACITY_DETAIL =
  "ingest is at capacity in this process (too many ingest requests storing at once): nothing of this request was stored; send it again after Retry-After seconds";

/** The routes that store what they are sent: every POST under /v1/ingest/ (transactions, accounts, the Helius webhook). */
export function isIngestWrite(route: Pick<RouteOptions, "method" | "url">): boolean {
  const methods = Array.isArray(route.method) ? route.method : [route.method];
  return methods.includes("POST") && route.url.startsWith("/v1/ingest/");
}

/**
 * Puts the admission in front of every ingest write's handler, as it is added (call it before the
 * routes are registered). The turn is held until the handler settles, not until the answer: a
 * request answered 503 at its deadline still stores, and still holds its connection.
 */
export function applyIngestAdmission(app: FastifyInstance, admission: IngestAdmission, random: () => number = Math.random): void {
  app.addHook("onRoute", (route) => {
    if (!isIngestWrite(route)) return;
    const handler = route.handler;
    route.handler = async function (this: FastifyInstance, request: FastifyRequest, reply: FastifyReply) {
      const entry = await admission.enter();
      if (!entry.admitted) {
        return sendProblem(reply, "unavailable", AT_CAPACITY_DETAIL, {
          headers: { "retry-after": String(refusalRetryAfterSeconds(random)) },
        });
      }
      try {
        return await handler.call(this, request, reply);
      } finally {
        entry.release();
      }
    } as RouteHandlerMethod;
  });
}
