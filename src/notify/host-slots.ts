// A cap on the attempts in flight to any one webhook receiver, per worker process. A worker
// takes jobs first in, first out with a fixed number of slots, so without it a burst of
// notifications to one receiver that hangs (or answers slowly) fills every slot until the
// timeout, and every other owner's webhooks wait behind it. Over its cap, a job steps aside
// (deliver.ts postpones it without an attempt) and the slot goes to the next job.
//
// The cap, and the line of the jobs stepping aside, are each owner's own share of a receiver:
// kept per (owner, receiver). Shared by every owner, one caller's alerts at a port or subdomain
// of someone else's domain that never answered held that domain's other webhooks to the floor
// and in a line of timeouts (a victim's receiver answering in 2 ms waited 33 s behind another
// caller's 100 notifications to a port that hung); at a shared ingest host (splunkcloud.com,
// slack.com) one customer's dead endpoint slowed every customer's. Now it costs only its owner.
//
// An owner's receivers not known to answer quickly (slow, silent, or with no attempt ended yet)
// hold at most `slowSlotsPerOwner` slots together: each one's floor alone let a caller with
// many receivers that hang (every public IPv4 address that drops packets is a receiver of its
// own) take every slot of the process. A job turned away by that bound steps aside in its
// owner's line, at the pace those slots free. Receivers known to answer quickly are not bound by
// it: a caller's busy, healthy endpoints keep all the slots they can use.
//
// The cap adapts per receiver, as TCP's window does: it starts at `floor`, grows by one with
// each quick answer up to `ceiling` (all the slots: one busy, healthy receiver can use them
// all), and halves, down to `floor`, with each slow or missing answer. A receiver that hangs
// therefore holds `floor` slots at most, however healthy it looked before, after a few timeouts.
//
// How long a job steps aside (stepAside) grows with what stands before it, so that a backlog to
// one receiver costs re-runs in proportion to the attempts that receiver can take, not to the
// backlog times the seconds it lasts. With a fixed ~1 s, each of 20,000 jobs queued for a
// receiver that hangs came back about once a second (some 7,000 runs a second for hours, each a
// load from PostgreSQL and two moves in Redis), and every other receiver's new jobs waited behind
// those re-runs in the wait list: seconds instead of milliseconds. A job now waits for the
// longer of:
// - its place in line: each job stepping aside for the receiver adds what one attempt takes
//   over the slots the receiver may use (its cap while it is slow, twice the ceiling while it
//   answers quickly, as its cap grows with each answer), so the line comes back about as fast as
//   the receiver takes attempts; while the receiver is slow the line starts no sooner than one
//   attempt from now (the timeout, for one that hangs): no slot frees sooner;
// - a least wait: a receiver's attempt time while it is slow (+0-50 %), else `stepAsideMs`
//   (±50 %), as before;
// and never longer than `maxStepAsideMs` (spread over its last quarter). What one attempt takes
// is the latest's duration while slow, else an average of the quick ones; with every slot busy and
// nothing back for longer than that (a receiver that hangs, before its first timeout), that
// silence instead, and the receiver counts as slow once it reaches `slowMs`. The line is kept
// while attempts are in flight or jobs are due back; a receiver that answers quickly again after
// being slow starts a new one.
//
// The jobs already in a line reckoned at a slow pace are called back by the receiver's next quick
// answer (give returns them; deliver.ts promotes them out of BullMQ's delayed set). Left to their
// delays, they kept them after the receiver had recovered: after a 30 s spell of 8 s answers, the
// newer notifications went out at once and the older ones up to 6 minutes late. Not a cap on the
// delay, re-reckoned at each wake: a cap of a few seconds brings a backlog of 20,000 jobs to a
// receiver that hangs back thousands of times a second (the re-runs the line exists to avoid).
// Called back, each job stepping aside at a slow pace costs at most one run more, whatever the
// backlog, however often the receiver turns slow and quick again. Only this worker process's own
// jobs: another's are called back by the first quick answer it gets, which its own line, waking at
// the receiver's pace, brings soon.
//
// Silence is time with attempts in flight and none of them answered: since the latest attempt
// ended or, if later, since the oldest one now in flight began. Time with nothing in flight is
// quiet, not silence. Counted from the latest end alone, a quiet spell read as a receiver that
// hangs as soon as a burst filled its slots at once (as jobs held by a PostgreSQL stall are
// released): after 70 s of stall, 240 of 580 webhooks to a receiver answering in 1 ms stepped
// aside for 100 s and more, the last sent 5 minutes later; after an hour's quiet each job over the
// cap waited 262 s, and a receiver whose cap had grown past the owner's bound on slow receivers
// was held to it.
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
  /** The least a job steps aside from a receiver that answers quickly (spread ±50 %); 1 s unless given. */
  stepAsideMs?: number;
  /** The most a job steps aside at once (spread over its last quarter); 5 minutes unless given. */
  maxStepAsideMs?: number;
  /**
   * Slots that one owner's receivers not known to answer quickly may hold together; twice the
   * floor unless given (so two of them, new or hanging, each still get their floor).
   */
  slowSlotsPerOwner?: number;
  /** Milliseconds since the epoch; Date.now unless given. */
  now?: () => number;
  /** 0 ≤ r < 1, for the spread; Math.random unless given. */
  random?: () => number;
};

export type HostSlots = {
  /**
   * Takes a slot for `owner`'s attempt to `host` if the owner's share of it has one free under
   * its cap, and the owner's bound on slow receivers allows.
   */
  tryTake: (owner: string, host: string) => boolean;
  /**
   * Gives back a slot taken by tryTake, with how the attempt went. After a quick answer, the jobs
   * to call back now: those that stepped aside from the host at a slow pace and are not due back
   * within `stepAsideMs` anyway, earliest due first (each one once).
   */
  give: (owner: string, host: string, attempt: { durationMs: number; answered: boolean }) => string[];
  /**
   * How long a job that tryTake turned away should wait before it comes back (ms), and takes
   * its place at the end of the line it waits in: the owner's share of the host's, or, turned
   * away by the owner's bound on slow receivers, the owner's. With `jobId`, a wait reckoned at a
   * slow pace is remembered, for give to call the job back.
   */
  stepAside: (owner: string, host: string, jobId?: string) => number;
  /** The cap of the owner's share of the host now (for tests and logs). */
  capOf: (owner: string, host: string) => number;
};

/** The end of a line of jobs stepping aside. */
type Line = {
  /** Where the line of the jobs stepping aside ends: when the last one may find a slot. */
  lineEndsAt: number;
  /** When the last job that stepped aside is due back. */
  dueBackBy: number;
};

/** How fast a line moves: each job waits `attemptMs` over `slots` behind the one before it. */
type Pace = { attemptMs: number; slow: boolean; slots: number };

type OwnerState = Line & {
  hosts: Map<string, HostState>;
  /** Its hosts with attempts in flight: at most as many as the process has slots, so cheap to walk. */
  busy: Set<HostState>;
  /** Per host, the jobs that stepped aside from it at a slow pace (in either line), for give to call back. */
  parked: Map<string, Parked>;
};

/** Jobs stepping aside at a slow pace: each one's due time, by job id. */
type Parked = {
  dueAt: Map<string, number>;
  /** At this size the entries already due (those jobs came back by themselves) are dropped: amortised, and bounded by the jobs really parked. */
  pruneAtSize: number;
};
/** The least size at which Parked is pruned. */
const PRUNE_AT_LEAST = 64;

type HostState = Line & {
  inFlight: number;
  cap: number;
  /** The latest attempt was slow or got no answer. */
  slow: boolean;
  /** An attempt has ended: until then, whether it answers quickly is not known. */
  ended: boolean;
  /** What one attempt takes: the latest when slow, else an average of the quick ones; 0 before any ended. */
  attemptMs: number;
  /**
   * Since when the attempts in flight have gone unanswered: when the latest attempt ended or, if
   * later, when the oldest one now in flight began. Set as a slot is taken with none in flight:
   * the start of a busy spell is that oldest one's start unless an attempt has ended since.
   */
  silentSince: number;
};

/** Weight of the newest quick attempt in the average. */
const QUICK_AVERAGE_WEIGHT = 0.2;
/**
 * A quick receiver's line is reckoned as if it took attempts this many times faster than its
 * ceiling allows: a job back a little early costs one more run, one back late leaves slots idle
 * while its cap grows. In a model of a burst of 10,000 jobs to one receiver (slots and caps as
 * here, no other costs), answers in 50 ms drained in 3.4-3.9 s against 3.6-4.0 s with the old
 * fixed ~1 s (reckoned at the ceiling itself, some 10 % later); answers in 1 s or 4 s drained as
 * soon as with it, in 4 runs per job instead of 28 and 109.
 */
const QUICK_LINE_HASTE = 2;

export function createHostSlots(options: HostSlotsOptions): HostSlots {
  const now = options.now ?? Date.now;
  const random = options.random ?? Math.random;
  const stepAsideMs = options.stepAsideMs ?? 1_000;
  const maxStepAsideMs = options.maxStepAsideMs ?? 5 * 60_000;
  const slowSlotsPerOwner = options.slowSlotsPerOwner ?? 2 * options.floor;
  const owners = new Map<string, OwnerState>();

  /** Not known to answer quickly: its latest attempt was slow, none has ended yet, or every one in flight has been silent for slowMs. */
  const unproven = (state: HostState, at: number) =>
    state.slow || !state.ended || (state.inFlight > 0 && at - state.silentSince >= options.slowMs);

  /** The slots held now by the owner's receivers not known to answer quickly. */
  const slowSlotsOf = (owner: OwnerState, at: number) => {
    let held = 0;
    for (const state of owner.busy) if (unproven(state, at)) held += state.inFlight;
    return held;
  };

  /** A receiver at its cap: what one attempt takes, and over how many slots. */
  const paceOfHost = (state: HostState, at: number): Pace => {
    // Every slot busy and no attempt back for silentFor: attempts take at least that long.
    const silentFor = at - state.silentSince;
    const slow = state.slow || silentFor >= options.slowMs;
    return { attemptMs: Math.max(state.attemptMs, silentFor), slow, slots: slow ? state.cap : options.ceiling * QUICK_LINE_HASTE };
  };

  /** The owner at its bound: its slots free as fast as the slowest of the receivers holding them. */
  const paceOfOwner = (owner: OwnerState, at: number): Pace | undefined => {
    let pace: Pace | undefined;
    for (const state of owner.busy) {
      if (!unproven(state, at)) continue;
      const host = paceOfHost(state, at);
      pace = { attemptMs: Math.max(pace?.attemptMs ?? 0, host.attemptMs), slow: (pace?.slow ?? false) || host.slow, slots: slowSlotsPerOwner };
    }
    return pace;
  };

  /** Remembers a job that stepped aside at a slow pace until `dueAt`, for give to call back. */
  const remember = (owner: OwnerState, host: string, jobId: string, dueAt: number, at: number) => {
    const parked = owner.parked.get(host) ?? { dueAt: new Map<string, number>(), pruneAtSize: PRUNE_AT_LEAST };
    parked.dueAt.set(jobId, dueAt);
    if (parked.dueAt.size >= parked.pruneAtSize) {
      for (const [id, due] of parked.dueAt) if (due <= at) parked.dueAt.delete(id);
      parked.pruneAtSize = Math.max(PRUNE_AT_LEAST, 2 * parked.dueAt.size);
    }
    owner.parked.set(host, parked);
  };

  /** The jobs of `host` to call back now, forgotten once returned. */
  const callBack = (owner: OwnerState, host: string, at: number): string[] => {
    const parked = owner.parked.get(host);
    if (!parked) return [];
    owner.parked.delete(host);
    return [...parked.dueAt]
      .filter(([, due]) => due > at + stepAsideMs)
      .sort(([, a], [, b]) => a - b)
      .map(([id]) => id);
  };

  /** A place at the end of `line`, which moves at `pace`; how long to wait for it (the header says how). */
  const lineUp = (line: Line, pace: Pace, at: number): number => {
    // Behind the last job in line, by what one attempt takes over the slots it may use; and
    // while the receiver is slow, no sooner than one attempt's duration from now.
    const perJob = pace.attemptMs / pace.slots;
    const soonest = at + (pace.slow ? pace.attemptMs : 0);
    line.lineEndsAt = Math.min(Math.max(line.lineEndsAt, soonest) + perJob, at + maxStepAsideMs);
    const least = pace.slow ? pace.attemptMs * (1 + random() / 2) : stepAsideMs * (0.5 + random());
    const most = maxStepAsideMs * (0.75 + random() / 4);
    const wait = Math.round(Math.min(most, Math.max(least, line.lineEndsAt - at)));
    line.dueBackBy = Math.max(line.dueBackBy, at + wait);
    return wait;
  };

  return {
    tryTake: (ownerName, host) => {
      const at = now();
      const owner = owners.get(ownerName) ?? { hosts: new Map(), busy: new Set(), parked: new Map(), lineEndsAt: at, dueBackBy: at };
      const state = owner.hosts.get(host) ?? {
        inFlight: 0,
        cap: options.floor,
        slow: false,
        ended: false,
        attemptMs: 0,
        silentSince: at,
        lineEndsAt: at,
        dueBackBy: at,
      };
      if (state.inFlight >= state.cap) return false;
      if (unproven(state, at) && slowSlotsOf(owner, at) >= slowSlotsPerOwner) return false;
      // The first attempt in flight after a quiet spell: silence starts now, not at the last attempt's end.
      if (state.inFlight === 0) state.silentSince = at;
      state.inFlight++;
      owner.hosts.set(host, state);
      owner.busy.add(state);
      owners.set(ownerName, owner);
      return true;
    },
    give: (ownerName, host, attempt) => {
      const owner = owners.get(ownerName);
      const state = owner?.hosts.get(host);
      if (!owner || !state) return [];
      const at = now();
      state.inFlight = Math.max(0, state.inFlight - 1);
      // An attempt that threw before it could say how long it took counts as a slow one.
      const durationMs = Number.isFinite(attempt.durationMs) ? Math.max(0, attempt.durationMs) : options.slowMs;
      const quick = attempt.answered && durationMs < options.slowMs;
      state.cap = quick ? Math.min(options.ceiling, state.cap + 1) : Math.max(options.floor, Math.floor(state.cap / 2));
      if (quick) {
        // Quick again after being slow: the line was reckoned at the slow pace.
        if (state.slow) state.lineEndsAt = Math.min(state.lineEndsAt, at);
        state.attemptMs =
          state.slow || !state.ended ? durationMs : state.attemptMs + QUICK_AVERAGE_WEIGHT * (durationMs - state.attemptMs);
      } else {
        state.attemptMs = durationMs;
      }
      state.slow = !quick;
      state.ended = true;
      state.silentSince = at;
      // Quick: the jobs that stepped aside at a slow pace come back now, not at that pace.
      const callBackNow = quick ? callBack(owner, host, at) : [];
      if (state.inFlight === 0) owner.busy.delete(state);
      // Nothing to remember of a receiver back at the floor with nothing in flight or stepping aside,
      // nor of an owner with no receiver left and no job due back from its line.
      if (state.inFlight === 0 && state.cap <= options.floor && state.dueBackBy <= at) owner.hosts.delete(host);
      if (owner.hosts.size === 0 && owner.dueBackBy <= at) owners.delete(ownerName);
      return callBackNow;
    },
    stepAside: (ownerName, host, jobId) => {
      const at = now();
      const owner = owners.get(ownerName);
      const state = owner?.hosts.get(host);
      // Turned away by its share's cap: in its share's line; else by the owner's bound on its slow receivers: in the owner's.
      const [line, pace] = state && state.inFlight >= state.cap ? [state, paceOfHost(state, at)] : [owner, owner && paceOfOwner(owner, at)];
      if (!owner || !line || !pace) return Math.round(stepAsideMs * (0.5 + random()));
      const wait = lineUp(line, pace, at);
      if (pace.slow && jobId !== undefined) remember(owner, host, jobId, at + wait, at);
      return wait;
    },
    capOf: (ownerName, host) => owners.get(ownerName)?.hosts.get(host)?.cap ?? options.floor,
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
