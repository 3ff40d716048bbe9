// Webhook host names resolved without the libuv threadpool. dns.lookup (getaddrinfo) runs on
// that pool's 4 threads with no timeout of its own: a receiver whose name server never answers
// held a thread per lookup for the system resolver's whole timeout, and four such lookups (one
// receiver may have 20 deliveries in flight) stalled every other webhook's lookup behind them,
// and the SMTP, Twilio and PostgreSQL connections that need a thread too; other owners'
// webhooks then timed out. So, as getaddrinfo does but without its thread: /etc/hosts first
// (read again when it changes), then c-ares (dns.Resolver), which asks the name servers of
// /etc/resolv.conf itself, on the event loop, within a bound (a fresh Resolver once that file
// changes: c-ares reads it when a Resolver is made, and only then). A name those servers say does
// not exist (an NXDOMAIN: a search-domain short name, say) is then asked of getaddrinfo, one
// lookup at a time, so such names can hold one thread at most.
import { lookup as systemLookup, promises as dns } from "node:dns";
import { readFileSync, statSync, type Stats } from "node:fs";
import { isIP } from "node:net";
import { parseResolvConf } from "./resolv-conf.ts";

/** Every address a host name resolves to, IPv4 first; none when the name exists without any. */
export type ResolveAll = (hostname: string) => Promise<string[]>;

export type HostResolverOptions = {
  /** Each try's timeout; c-ares tries each name server `tries` times. */
  timeoutMs?: number;
  tries?: number;
  /** Name servers (`host` or `host:port`) instead of /etc/resolv.conf's, for good (resolvConf unread): for tests. */
  servers?: string[];
  /**
   * A resolv.conf instead of /etc/resolv.conf, followed as that one is: for tests. A Resolver
   * made reads /etc/resolv.conf whatever this says, so this file's name servers are read here
   * (parseResolvConf) and set on each fresh Resolver; a file that names none leaves c-ares's.
   */
  resolvConf?: string;
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
  const resolverOptions = { timeout: options.timeoutMs ?? 1_500, tries: options.tries ?? 2 };
  const currentResolver = options.servers ? fixedResolver(resolverOptions, options.servers) : resolvConfResolver(resolverOptions, options.resolvConf);
  const fromSystem = oneAtATime(options.systemLookup ?? getaddrinfo, options.systemDeadlineMs ?? 3_000);
  const fromHostsFile = hostsFileReader(options.hostsFile ?? "/etc/hosts");
  const resolveAll: ResolveAll = async (hostname) => {
    const listed = fromHostsFile(hostname);
    if (listed.length > 0) return listed;
    // Both families asked of one Resolver: a fresh one made meanwhile is the next lookup's.
    const resolver = currentResolver();
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

type ResolverOptions = { timeout: number; tries: number };

function fixedResolver(options: ResolverOptions, servers: string[]): () => dns.Resolver {
  const resolver = new dns.Resolver(options);
  resolver.setServers(servers);
  return () => resolver;
}

/**
 * A Resolver asking the name servers of resolv.conf, a fresh one once the file's text has
 * changed (noticed as the hosts file's changes are: followFile). c-ares reads /etc/resolv.conf
 * when a Resolver is made and never again, and setServers refuses while queries are pending, so
 * a long-running worker went on asking the name servers it started with, whatever DHCP, an
 * operator or the container runtime wrote there since. The Resolver before keeps the lookups
 * already asked of it: they finish (or time out) as they would have. While the file is gone (a
 * replacement half done, say) the Resolver there is stays. `path`: a file other than
 * /etc/resolv.conf, whose name servers are read here and set, as `new Resolver()` would read
 * /etc/resolv.conf's.
 */
function resolvConfResolver(options: ResolverOptions, path?: string): () => dns.Resolver {
  return followFile(path ?? "/etc/resolv.conf", (text, before: dns.Resolver | undefined) => {
    if (before && text === undefined) return before;
    const resolver = new dns.Resolver(options);
    const servers = path === undefined || text === undefined ? [] : parseResolvConf(text);
    if (servers.length > 0) resolver.setServers(servers);
    return resolver;
  });
}

/** How long after a file's mtime a write in the same timestamp tick could still follow unseen. */
const RACY_MS = 2_000;

/**
 * What `make` makes of a file's text (undefined: there is no file, or it cannot be read), made
 * again when the text has changed, with what it made before. A stat per call (lookups are made
 * per new connection, not per request): the file is read again when its inode, size or mtime
 * differ, and at every call while its mtime is within RACY_MS of the read (a second write within
 * the filesystem's timestamp granularity keeps the mtime: the text tells). Synchronous on
 * purpose: a local file's stat and read are quick, and off the threadpool.
 */
function followFile<T>(path: string, make: (text: string | undefined, before: T | undefined) => T): () => T {
  let known: { stamp: string | undefined; racy: boolean; text: string | undefined; made: T } | undefined;
  return () => {
    let stats: Stats | undefined;
    try {
      stats = statSync(path);
    } catch {
      stats = undefined;
    }
    const stamp = stats && `${stats.ino}:${stats.size}:${stats.mtimeMs}`;
    if (known && !known.racy && stamp === known.stamp) return known.made;
    let text: string | undefined;
    try {
      text = stats && readFileSync(path, "utf8");
    } catch {
      text = undefined;
    }
    const made = known && text === known.text ? known.made : make(text, known?.made);
    known = { stamp, racy: stats !== undefined && Date.now() - stats.mtimeMs < RACY_MS, text, made };
    return made;
  };
}

/** The addresses a hosts file gives a name, read again when the file changes (followFile). */
function hostsFileReader(path: string): (hostname: string) => string[] {
  const addresses = followFile(path, (text) => (text === undefined ? new Map<string, string[]>() : parseHostsFile(text)));
  return (hostname) => {
    const found = addresses().get(hostname.toLowerCase().replace(/\.$/, "")) ?? [];
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
