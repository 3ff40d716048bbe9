// Webhook host names resolved without the libuv threadpool. dns.lookup (getaddrinfo) runs on
// that pool's 4 threads with no timeout of its own: a receiver whose name server never answers
// held a thread per lookup for the system resolver's whole timeout, and four such lookups (one
// receiver may have 20 deliveries in flight) stalled every other webhook's lookup behind them,
// and the SMTP, Twilio and PostgreSQL connections that need a thread too; other owners'
// webhooks then timed out. So, as getaddrinfo does but without its thread: /etc/hosts first
// (read again when it changes), then c-ares (dns.Resolver), which asks the name servers of
// /etc/resolv.conf itself, on the event loop, within a bound. A name those servers say does
// not exist (an NXDOMAIN: a search-domain short name, say) is then asked of getaddrinfo, one
// lookup at a time, so such names can hold one thread at most.
import { lookup as systemLookup, promises as dns } from "node:dns";
import { readFileSync, statSync } from "node:fs";
import { isIP } from "node:net";

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
  /** The hosts file (/etc/hosts): for tests. */
  hostsFile?: string;
  /** getaddrinfo by default: for tests of the queue in front of it. */
  systemLookup?: ResolveAll;
  /** How long a caller waits for the whole answer (unbounded but for the tries: delivery, inside its connect timeout). */
  deadlineMs?: number;
};

export function createHostResolver(options: HostResolverOptions = {}): ResolveAll {
  const resolver = new dns.Resolver({ timeout: options.timeoutMs ?? 1_500, tries: options.tries ?? 2 });
  if (options.servers) resolver.setServers(options.servers);
  const fromSystem = oneAtATime(options.systemLookup ?? getaddrinfo, options.systemDeadlineMs ?? 3_000);
  const fromHostsFile = hostsFileReader(options.hostsFile ?? "/etc/hosts");
  const resolveAll: ResolveAll = async (hostname) => {
    const listed = fromHostsFile(hostname);
    if (listed.length > 0) return listed;
    const [v4, v6] = await Promise.allSettled([resolver.resolve4(hostname), resolver.resolve6(hostname)]);
    const addresses = [...(v4.status === "fulfilled" ? v4.value : []), ...(v6.status === "fulfilled" ? v6.value : [])];
    if (addresses.length > 0) return addresses;
    const errors = [v4, v6].flatMap((answer) => (answer.status === "rejected" ? [answer.reason as NodeJS.ErrnoException] : []));
    // Not found (in one family, and no data in the other at most): the system may still know it.
    if (errors.some((error) => error.code === "ENOTFOUND") && errors.every((error) => error.code === "ENOTFOUND" || error.code === "ENODATA")) {
      return fromSystem(hostname);
    }
    // "No data" for a family is an answer (the name has no address of that kind); anything else is a failure.
    const failure = errors.find((error) => error.code !== "ENODATA");
    if (failure) throw failure;
    return [];
  };
  const { deadlineMs } = options;
  return deadlineMs === undefined ? resolveAll : (hostname) => within(hostname, deadlineMs, resolveAll(hostname));
}

/** The lookup's answer, or an ETIMEOUT failure after `deadlineMs` (and then `onExpire`). */
function within(hostname: string, deadlineMs: number, lookup: Promise<string[]>, onExpire = () => {}): Promise<string[]> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      onExpire();
      reject(Object.assign(new Error(`lookup of ${hostname} timed out after ${deadlineMs} ms`), { code: "ETIMEOUT" }));
    }, deadlineMs);
  });
  return Promise.race([lookup, deadline]).finally(() => clearTimeout(timer));
}

const getaddrinfo: ResolveAll = (hostname) =>
  new Promise((resolve, reject) => {
    systemLookup(hostname, { all: true, verbatim: true }, (error, answers) =>
      error ? reject(error) : resolve(answers.map((answer) => answer.address)),
    );
  });

/**
 * `lookup` run for one name at a time, each after the one before has finished (not merely been
 * given up on: its thread is still held), each caller waiting `deadlineMs` at most. A lookup
 * whose caller gave up before its turn is not made: after a burst, the names still waited for
 * come next.
 */
function oneAtATime(lookup: ResolveAll, deadlineMs: number): ResolveAll {
  let previous: Promise<unknown> = Promise.resolve();
  return (hostname) => {
    let abandoned = false;
    const run = previous.then(() => (abandoned ? [] : lookup(hostname)));
    previous = run.catch(() => {});
    return within(hostname, deadlineMs, run, () => (abandoned = true));
  };
}

/**
 * The addresses a hosts file gives a name, read again when the file changes (a stat per
 * lookup: lookups are made per new connection, not per request). Synchronous on purpose: a
 * local file's stat and read are quick, and off the threadpool.
 */
function hostsFileReader(path: string): (hostname: string) => string[] {
  let read: { mtimeMs: number; addresses: Map<string, string[]> } | undefined;
  return (hostname) => {
    let mtimeMs: number;
    try {
      mtimeMs = statSync(path).mtimeMs;
    } catch {
      return [];
    }
    if (read?.mtimeMs !== mtimeMs) read = { mtimeMs, addresses: parseHostsFile(readFileSync(path, "utf8")) };
    const found = read.addresses.get(hostname.toLowerCase().replace(/\.$/, "")) ?? [];
    // IPv4 first, as the name servers' answers are given.
    return [...found.filter((address) => isIP(address) === 4), ...found.filter((address) => isIP(address) === 6)];
  };
}

/** "address name alias…" lines, # comments; each name's addresses in file order. */
export function parseHostsFile(text: string): Map<string, string[]> {
  const addresses = new Map<string, string[]>();
  for (const line of text.split("\n")) {
    const [address, ...names] = line.replace(/#.*/, "").trim().split(/\s+/);
    if (!address || isIP(address.replace(/%.*$/, "")) === 0) continue;
    for (const name of names) {
      const key = name.toLowerCase().replace(/\.$/, "");
      const known = addresses.get(key) ?? [];
      if (!known.includes(address)) known.push(address);
      addresses.set(key, known);
    }
  }
  return addresses;
}
