// Webhook host names resolved without the libuv threadpool. dns.lookup (getaddrinfo) runs on
// that pool's 4 threads with no timeout of its own: a receiver whose name server never answers
// held a thread per lookup for the system resolver's whole timeout, and four such lookups (one
// receiver may have 20 deliveries in flight) stalled every other webhook's lookup behind them,
// and the SMTP, Twilio and PostgreSQL connections that need a thread too; other owners'
// webhooks then timed out. c-ares (dns.Resolver) asks the name servers of /etc/resolv.conf
// itself, on the event loop, within a bound. A name those servers say does not exist (both
// families NXDOMAIN: an /etc/hosts entry, a search-domain short name) is then asked of
// getaddrinfo, one lookup at a time, so such names can hold one thread at most.
import { lookup as systemLookup, promises as dns } from "node:dns";

/** Every address a host name resolves to, IPv4 first; none when the name exists without any. */
export type ResolveAll = (hostname: string) => Promise<string[]>;

export type HostResolverOptions = {
  /** Each try's timeout; c-ares tries each name server `tries` times. */
  timeoutMs?: number;
  tries?: number;
  /** Name servers (`host` or `host:port`) instead of /etc/resolv.conf's: for tests. */
  servers?: string[];
  /** How long a caller waits for getaddrinfo, its turn included. */
  systemDeadlineMs?: number;
};

export function createHostResolver(options: HostResolverOptions = {}): ResolveAll {
  const resolver = new dns.Resolver({ timeout: options.timeoutMs ?? 1_500, tries: options.tries ?? 2 });
  if (options.servers) resolver.setServers(options.servers);
  const fromSystem = oneAtATime(getaddrinfo, options.systemDeadlineMs ?? 3_000);
  return async (hostname) => {
    const [v4, v6] = await Promise.allSettled([resolver.resolve4(hostname), resolver.resolve6(hostname)]);
    const addresses = [...(v4.status === "fulfilled" ? v4.value : []), ...(v6.status === "fulfilled" ? v6.value : [])];
    if (addresses.length > 0) return addresses;
    const errors = [v4, v6].flatMap((answer) => (answer.status === "rejected" ? [answer.reason as NodeJS.ErrnoException] : []));
    if (errors.length === 2 && errors.every((error) => error.code === "ENOTFOUND")) return fromSystem(hostname);
    // "No data" for a family is an answer (the name has no address of that kind); anything else is a failure.
    const failure = errors.find((error) => error.code !== "ENODATA");
    if (failure) throw failure;
    return [];
  };
}

const getaddrinfo: ResolveAll = (hostname) =>
  new Promise((resolve, reject) => {
    systemLookup(hostname, { all: true, verbatim: true }, (error, answers) =>
      error ? reject(error) : resolve(answers.map((answer) => answer.address)),
    );
  });

/**
 * `lookup` run for one name at a time, each after the one before has finished (not merely been
 * given up on: its thread is still held), each caller waiting `deadlineMs` at most.
 */
function oneAtATime(lookup: ResolveAll, deadlineMs: number): ResolveAll {
  let previous: Promise<unknown> = Promise.resolve();
  return (hostname) => {
    const run = previous.then(() => lookup(hostname));
    previous = run.catch(() => {});
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(Object.assign(new Error(`lookup of ${hostname} timed out after ${deadlineMs} ms`), { code: "ETIMEOUT" })),
        deadlineMs,
      );
    });
    return Promise.race([run, deadline]).finally(() => clearTimeout(timer));
  };
}
