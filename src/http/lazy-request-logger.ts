// Fastify gives every request a logger of its own: a child of the service's logger bound to the
// request id. Pino makes a child by serializing its bindings and, with redaction on (logger.ts),
// setting redaction up again: about 4 % of the API's CPU on a cached GET /v1/wallets (perf),
// though nearly every request logs nothing through it (the request line goes through the
// service's logger: app.ts). Here a request's logger is made when it first writes, or when
// asked for a child or its level.
import type { FastifyBaseLogger } from "fastify";

type ChildOptions = Parameters<FastifyBaseLogger["child"]>[1];
type Bindings = Parameters<FastifyBaseLogger["child"]>[0];
/** A request's logger: the child of `parent` that `bindings` and `options` describe, made when first used. */
class LazyChildLogger {
  #child: FastifyBaseLogger | undefined;
  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
    private readonly options: ChildOptions,
  ) {}

  #made(): FastifyBaseLogger {
    return (this.#child ??= this.parent.child(this.bindings, this.options));
  }

  get level(): string {
    return this.#made().level;
  }
  set level(level: string) {
    this.#made().level = level;
  }
  child(bindings: Bindings, options?: ChildOptions): FastifyBaseLogger {
    return this.#made().child(bindings, options);
  }
  fatal(...args: Parameters<FastifyBaseLogger["fatal"]>): void {
    this.#made().fatal(...args);
  }
  error(...args: Parameters<FastifyBaseLogger["error"]>): void {
    this.#made().error(...args);
  }
  warn(...args: Parameters<FastifyBaseLogger["warn"]>): void {
    this.#made().warn(...args);
  }
  info(...args: Parameters<FastifyBaseLogger["info"]>): void {
    this.#made().info(...args);
  }
  debug(...args: Parameters<FastifyBaseLogger["debug"]>): void {
    this.#made().debug(...args);
  }
  trace(...args: Parameters<FastifyBaseLogger["trace"]>): void {
    this.#made().trace(...args);
  }
  silent(...args: Parameters<FastifyBaseLogger["silent"]>): void {
    this.#made().silent(...args);
  }
}

/** Fastify's childLoggerFactory. */
export function lazyRequestLogger(parent: FastifyBaseLogger, bindings: Bindings, options: ChildOptions): FastifyBaseLogger {
  return new LazyChildLogger(parent, bindings, options);
}
