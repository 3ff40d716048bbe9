// A cap on the attempts in flight to any one webhook receiver, per worker process. A worker
// takes jobs first in, first out with a fixed number of slots, so without it a burst of
// notifications to one receiver that hangs (or answers slowly) fills every slot until the
// timeout, and every other owner's webhooks wait behind it. Over its cap, a job steps aside
// (deliver.ts postpones it without an attempt) and the slot goes to the next job.
//
// The cap adapts per receiver, as TCP's window does: it starts at `floor`, grows by one with
// each quick answer up to `ceiling` (all the slots: one busy, healthy receiver can use them
// all), and halves, down to `floor`, with each slow or missing answer. A receiver that hangs
// therefore holds `floor` slots at most, however healthy it looked before, after a few timeouts.
//
// A receiver is what one party controls: a registrable domain, or an address (receiverOf).

import { isIP } from "node:net";
import ipaddr from "ipaddr.js";
import { getDomain } from "tldts";

export type HostSlotsOptions = {
  /** Slots a receiver always may use, and starts with. */
  floor: number;
  /** Slots a receiver that answers quickly may grow to. */
  ceiling: number;
  /** An attempt that took this long or more (or got no answer) counts as slow. */
  slowMs: number;
};

export type HostSlots = {
  /** Takes a slot for `host` if it has one free under its cap. */
  tryTake: (host: string) => boolean;
  /** Gives back a slot taken by tryTake, with how the attempt went. */
  give: (host: string, attempt: { durationMs: number; answered: boolean }) => void;
  /** The host's cap now (for tests and logs). */
  capOf: (host: string) => number;
};

export function createHostSlots(options: HostSlotsOptions): HostSlots {
  const hosts = new Map<string, { inFlight: number; cap: number }>();
  return {
    tryTake: (host) => {
      const state = hosts.get(host) ?? { inFlight: 0, cap: options.floor };
      if (state.inFlight >= state.cap) return false;
      state.inFlight++;
      hosts.set(host, state);
      return true;
    },
    give: (host, attempt) => {
      const state = hosts.get(host);
      if (!state) return;
      state.inFlight = Math.max(0, state.inFlight - 1);
      const quick = attempt.answered && attempt.durationMs < options.slowMs;
      state.cap = quick ? Math.min(options.ceiling, state.cap + 1) : Math.max(options.floor, Math.floor(state.cap / 2));
      // Nothing to remember of a receiver back at the floor with nothing in flight.
      if (state.inFlight === 0 && state.cap <= options.floor) hosts.delete(host);
    },
    capOf: (host) => hosts.get(host)?.cap ?? options.floor,
  };
}

/**
 * The receiver a webhook URL names, as the cap counts it; undefined when it is no URL at all.
 * A receiver is a registrable domain (eTLD+1 by the Public Suffix List), whatever the port,
 * the letter case or a trailing dot: a.tarpit.example and B.TARPIT.example.:8443 are one.
 * Keyed on the host name's text, ten names under one domain, all resolving to one server that
 * never answers, each got the floor and together held every slot.
 */
export function receiverOf(url: string): string | undefined {
  let hostname: string;
  try {
    hostname = new URL(url).hostname; // lower case, punycode, IPv4 in its dotted form
  } catch {
    return undefined;
  }
  const host = hostname.replace(/^\[(.*)\]$/, "$1").replace(/\.+$/, "").toLowerCase();
  if (isIP(host) !== 0) return addressReceiver(host);
  // The private section too: each tenant of a hosting platform (abc.execute-api.…amazonaws.com,
  // a Lambda URL on on.aws, foo.azurewebsites.net, foo.herokuapp.com) is its own receiver. With
  // the ICANN section alone they all were amazonaws.com, azurewebsites.net…: one caller's
  // hanging Lambda URL held every other customer's AWS-hosted webhooks to the floor. The price:
  // under a dynamic-DNS suffix (duckdns.org) a caller can make many names, each with a floor,
  // as with many registered domains.
  // validateHostname off: a name with "_" (which a wildcard record answers) must not escape
  // its domain by being judged no host name at all.
  return getDomain(host, { validateHostname: false, allowPrivateDomains: true }) ?? host;
}

/**
 * An address literal's receiver: IPv4 itself (an IPv4-mapped IPv6 one too), IPv6 its /64,
 * which one host commonly owns whole: each of its 2^64 spellings must not get a floor of its own.
 */
function addressReceiver(address: string): string {
  const parsed = ipaddr.parse(address);
  if (parsed.kind() === "ipv4") return parsed.toString();
  const v6 = parsed as ipaddr.IPv6;
  if (v6.isIPv4MappedAddress()) return v6.toIPv4Address().toString();
  return `${v6.parts.slice(0, 4).map((part) => part.toString(16)).join(":")}::/64`;
}
