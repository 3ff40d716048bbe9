// The one HTTP client that webhooks go through: an undici Agent (pooled, keep-alive) whose
// connector checks, on every new connection, every address the host resolves to with the
// SSRF rules of ssrf.ts. Checking at connect time rather than only at alert creation is
// what stops DNS rebinding: the name is resolved once, checked, and the socket goes to
// exactly the address that was checked.
import type { LookupAddress } from "node:dns";
import { isIP } from "node:net";
import { Agent, buildConnector, type Dispatcher } from "undici";
import { PERMANENT_ERROR_CODES } from "./retry-policy.ts";
import { createHostResolver, type ResolveAll } from "./resolve-host.ts";
import { NON_PUBLIC, refusedAddressKind } from "./ssrf.ts";

export type { ResolveAll };

export type SafeDispatcherOptions = {
  allowedCidrs: readonly string[];
  /** Connect timeout; the request's own timeouts are set per request. */
  connectTimeoutMs?: number;
  /** Replaces the resolver (createHostResolver: c-ares, off the threadpool), for tests that need a name resolving to a chosen address. */
  resolve?: ResolveAll;
  /** Sockets per origin; no limit unless given (createSafeDispatcher says why). */
  connectionsPerOrigin?: number;
};

export class AddressRefusedError extends Error {
  override name = "AddressRefusedError";
  readonly code = PERMANENT_ERROR_CODES.addressRefused;
}

/**
 * The attempt's error, which its owner reads through the API: for a literal address, its
 * kind; for a name, not the address it resolved to (that would map internal names).
 */
function refusal(host: string, address: string, kind: string): AddressRefusedError {
  return new AddressRefusedError(host === address ? `refused to connect to ${address}: ${kind}` : `refused to connect to ${host}: it resolves to ${NON_PUBLIC}`);
}

type LookupCallback = (error: Error | null, address: string | LookupAddress[], family?: number) => void;

/** A net.connect `lookup` that refuses the whole name when any of its addresses is refused. */
function checkedLookup(resolveAll: ResolveAll, allowedCidrs: readonly string[]) {
  return (hostname: string, options: { all?: boolean }, callback: LookupCallback): void => {
    // RFC 6761: localhost names are loopback whatever a resolver says (as at creation).
    const name = hostname.toLowerCase().replace(/\.$/, "");
    const answer = name === "localhost" || name.endsWith(".localhost") ? Promise.resolve(["127.0.0.1", "::1"]) : resolveAll(hostname);
    answer.then(
      (addresses) => {
        if (addresses.length === 0) {
          callback(Object.assign(new Error(`${hostname} has no address`), { code: "ENOTFOUND" }), []);
          return;
        }
        for (const address of addresses) {
          const kind = refusedAddressKind(address, allowedCidrs);
          if (kind) {
            callback(refusal(hostname, address, kind), []);
            return;
          }
        }
        const entries = addresses.map((address) => ({ address, family: isIP(address) }));
        if (options.all) callback(null, entries);
        else callback(null, entries[0]!.address, entries[0]!.family);
      },
      (error: Error) => callback(error, []),
    );
  };
}

export function createSafeDispatcher(options: SafeDispatcherOptions): Dispatcher {
  const { allowedCidrs } = options;
  const base = buildConnector({
    timeout: options.connectTimeoutMs ?? 10_000,
    lookup: checkedLookup(options.resolve ?? createHostResolver(), allowedCidrs),
  } as buildConnector.BuildOptions);

  const connect: buildConnector.connector = (connectOptions, callback) => {
    // net.connect skips `lookup` for a literal address, so literals are judged here:
    // 127.0.0.1, [::1], [::ffff:7f00:1] (WHATWG URL has already normalised 0x7f.1 and friends).
    const host = connectOptions.hostname.replace(/^\[(.*)\]$/, "$1");
    if (isIP(host) !== 0) {
      const kind = refusedAddressKind(host, allowedCidrs);
      if (kind) {
        callback(refusal(host, host, kind), null);
        return;
      }
    }
    base(connectOptions, callback);
  };

  return new Agent({
    connect,
    // No limit of its own per origin: the worker's webhook slots (deliver.ts, 200 a process) and
    // each receiver's share of them (host-slots.ts) already bound the attempts in flight, so
    // this bound could only add a wait, inside undici, that the attempt's timeout counts as the
    // receiver's slowness. With 64 a receiver's 200 slots shared 64 sockets: in a burst, the
    // attempts past 64 reached a receiver answering in 8 s 7-15 s into their 15 s, were recorded
    // "no complete answer within 15000 ms" (halving its cap) and sent again later under the same
    // webhook-id. Sockets are one per attempt in flight at most, idle ones closed after 10 s.
    connections: options.connectionsPerOrigin ?? null,
    keepAliveTimeout: 10_000,
    // Redirects are never followed: no redirect interceptor is composed onto this agent.
  });
}
