// Seeded scenarios for the reference-model test (test/integration/reference-model.test.ts): a
// few tracked wallets of two callers, labelled counterparties and strangers, and a sequence of
// steps — native and Helius ingest batches (bursts, failing runs, drains, token transfers,
// transfers between tracked wallets, late and repeated transactions, a backfill across three
// months of silence), label changes, alerts created, paused, resumed, edited and deleted, and
// wallets tracked, deleted and tracked again. The same seed gives the same scenario.
//
// Two options add what the README does not promise exact counts for: `veryLate`, transactions
// one to five hours late, now and then several near the same late minute (they count against
// what is still kept of the counters); `crowd`, a wallet that pays more than 1,000
// counterparties, so that its remembered set is trimmed, and then pays some of them again.
// A third, `dust`, sends a wallet with a risk_score_increase alert waves of address-poisoning
// dust from fresh addresses, which it then pays back in part (README "Risk score": a transfer
// it received is only remembered, never a new counterparty). A fourth, `limitFalls`, gives a
// wallet of its own a busy hour 169 hours before a burst, so that its unusual_activity limit
// falls under the burst at the next hour boundary (README "Alert conditions": the verdict before
// a transaction is judged against the limit of its own hour), then re-arms its alert with a
// lower threshold in the burst it reported (an armed alert does not page that burst again).
import { createRandom, type Random } from "../../src/sim/random.ts";
import { MINTS } from "./chain.ts";
import type { HeliusItem } from "./reference-helius.ts";
import type { Condition, ModelTx } from "./reference-model.ts";
import { COUNTERPARTY_LABELS } from "./counterparty-labels.ts";

export const STEPS = 60;
export const WALLETS = 6; // w0–w5 tracked from the start; w6 tracked halfway, after it has history
export const LATE = 6;
/** Alice's wallet deleted a third of the way in and tracked again six steps later. */
export const DROPPED = 3;
export const BOB_WALLETS = [0, 1];
/** The `crowd` option's wallet (index into `wallets`): alice's, with no alert on its score, nobody else's counterparty. */
export const CROWD = WALLETS + 1;
/** The steps at which the crowd pays: 560 new counterparties twice; then, an hour on, some old ones again twice (the first of these batches trims the set). */
/** The mint of a token that calls itself SOL or USDC: neither to the alerts. */
const IMPOSTOR_MINT = "Ejv8hcsDVq1k2gTkgLsUV4KC3CaTNEAZmpMNv9L6dKPy";
const CROWD_STEPS = [5, 6, 12, 45];
/**
 * The steps of the `dust` option: a wave of dust; the wallet pays some of the senders back and a
 * few fresh addresses; both in one batch; fresh addresses paid that pay dust back.
 */
const DUST_STEPS = [14, 15, 50, 55];
/**
 * The steps of the `limitFalls` option: the busy hour (672 transfers, 4 an hour over the next
 * 168 hours' baselines); 10 transfers at minutes 50–59 of the hour that busy hour is the oldest
 * of (limit 3 × 4 = 12); one at the next hour's start (limit 3: it fires); its threshold lowered
 * to 2.5 (armed again); one more two minutes later (the burst is reported: nothing).
 */
const LIMIT_STEPS = [7, 8, 9, 10, 11];
/** 100 lamports. */
const DUST_SOL = 0.0000001;
export const LABELS = COUNTERPARTY_LABELS;
export const RELABELS = [
  { category: "hack", score: 85 },
  { category: "defi", score: 10 },
  { category: "flagged", score: 80 },
  { category: "exchange", score: 30 },
  { category: "mixer", score: 95 },
  { category: "gambling", score: 40 },
] as const;
type Category = (typeof LABELS)[number]["category"] | (typeof RELABELS)[number]["category"];

export type AlertSpec = { owner: "alice" | "bob"; wallet: number; condition: Condition; threshold: number; token: string | null; cooldownSeconds: number };
export type Step =
  | { kind: "ingest"; note: string; txs: ModelTx[] }
  | { kind: "helius"; items: HeliusItem[] }
  | { kind: "labels"; labels: Array<{ address: string; category: Category; score: number }> }
  | { kind: "alert"; slot: number; spec: AlertSpec }
  | { kind: "status"; slot: number; status: "active" | "paused" }
  | { kind: "patch"; slot: number; patch: { threshold?: number; cooldownSeconds?: number } }
  | { kind: "delete"; slot: number }
  | { kind: "track"; owner: "alice" | "bob"; wallet: number }
  | { kind: "untrack"; owner: "alice" | "bob"; wallet: number };
export type Scenario = {
  /** Tracked by alice at the start besides w0–w5 (the crowd). */
  extraWallets?: number[];
  wallets: string[];
  labelled: string[];
  strangers: string[];
  balances: Array<{ wallet: number; balance: number }>;
  alerts: AlertSpec[];
  steps: Array<Step & { now: number }>;
};

function thresholdFor(random: Random, condition: Condition): number {
  return {
    large_transfer: random.pick([50, 100, 250]),
    suspicious_counterparty: random.pick([75, 50, 15, 0]),
    unusual_activity: random.pick([3, 4, 2.5, 6]),
    risk_score_increase: random.pick([10, 20, 5, 30]),
  }[condition];
}

function randomAlert(random: Random, owner: "alice" | "bob", wallet: number): AlertSpec {
  const condition = random.pick(["large_transfer", "suspicious_counterparty", "unusual_activity", "risk_score_increase"] as const);
  const token = condition === "large_transfer" ? random.pick([null, null, "usdc", MINTS.USDC, "SOL"]) : null;
  return { owner, wallet, condition, threshold: thresholdFor(random, condition), token, cooldownSeconds: random.pick([0, 0, 0, 300, 3600, 86_400]) };
}

export type ScenarioOptions = { veryLate?: boolean; crowd?: boolean; dust?: boolean; limitFalls?: boolean };

export function scenario(seed: number, options: ScenarioOptions = {}): Scenario {
  const random = createRandom(seed);
  const wallets = Array.from({ length: WALLETS + 1 }, random.address);
  // The options draw from streams of their own, so that a seed without them plays as before.
  const crowdRandom = createRandom(seed, 2);
  if (options.crowd) wallets.push(crowdRandom.address());
  const dustRandom = createRandom(seed, 4);
  const limitRandom = createRandom(seed, 5);
  // The limitFalls wallet: alice's, nobody's counterparty, with one unusual_activity alert.
  const limitWallet = options.limitFalls ? wallets.push(limitRandom.address()) - 1 : -1;
  // One of alice's wallets tracked throughout (not DROPPED, not LATE).
  const dustWallet = dustRandom.pick([0, 1, 2, 4, 5]);
  const labelled = LABELS.map(random.address);
  const strangers = Array.from({ length: 14 }, random.address);
  const tracked = new Set(Array.from({ length: WALLETS }, (_, i) => i));
  const bobWallets = new Set(BOB_WALLETS);
  const alerts: AlertSpec[] = [];
  for (let w = 0; w < WALLETS; w++) for (let k = random.int(2, 3); k > 0; k--) alerts.push(randomAlert(random, "alice", w));
  for (const w of BOB_WALLETS) for (let k = random.int(1, 2); k > 0; k--) alerts.push(randomAlert(random, "bob", w));
  if (options.crowd) {
    // Its alerts do not depend on its score (risk_score_increase would, through new_counterparty_burst).
    alerts.push({ owner: "alice", wallet: CROWD, condition: "large_transfer", threshold: 100, token: null, cooldownSeconds: 0 });
    alerts.push({ owner: "alice", wallet: CROWD, condition: "unusual_activity", threshold: 3, token: null, cooldownSeconds: 0 });
  }
  if (options.dust) {
    // Dust counted as new counterparties fired this alert (and paged its owner).
    alerts.push({ owner: "alice", wallet: dustWallet, condition: "risk_score_increase", threshold: 10, token: null, cooldownSeconds: 0 });
  }
  if (options.limitFalls) alerts.push({ owner: "alice", wallet: limitWallet, condition: "unusual_activity", threshold: 3, token: null, cooldownSeconds: 0 });
  /** The limitFalls alert's slot: its steps pause, edit or delete it, no random one does. */
  const limitSlot = options.limitFalls ? alerts.length - 1 : -1;
  const initialAlerts = alerts.length;
  const status = alerts.map(() => "active" as "active" | "paused" | "deleted");

  let clock = 1_717_000_000;
  let slot = 268_000_000;
  const ingested: ModelTx[] = [];
  const heliusSent: HeliusItem[] = [];
  const trackedWallet = () => wallets[random.pick([...tracked])]!;
  const party = () => {
    const roll = random.next();
    if (roll < 0.45) return wallets[random.int(0, WALLETS)]!; // the late wallet too, before and after its tracking
    if (roll < 0.65) return random.pick(labelled);
    return random.pick(strangers);
  };
  const tx = (from: string, to: string, extra: Partial<ModelTx> = {}): ModelTx => {
    // Seconds apart, now and then in the same second (chain order then goes by slot and signature).
    const sameSecond = random.chance(0.15);
    if (!sameSecond) clock += random.int(1, 20);
    slot += sameSecond && random.chance(0.5) ? 0 : random.int(1, 40);
    // An impostor: a token of its own mint whose creator called it SOL or USDC.
    const token = random.weighted({ SOL: 6, USDC: 2, USDCbare: 1, BONK: 1, impostor: 1 });
    const amount = random.chance(0.1) ? random.int(100, 900) : Math.round(random.between(0.1, 60) * 10) / 10;
    return {
      signature: random.signature(),
      type: random.weighted({ transfer: 6, swap: 1, stake: 1, nft: 1, other: 1 }),
      amount: token === "USDC" || token === "USDCbare" || token === "impostor" ? amount * 4 : amount,
      token: token === "USDCbare" ? "USDC" : token === "BONK" ? MINTS.BONK : token === "impostor" ? random.pick(["SOL", "USDC"]) : token,
      ...(token === "USDC" ? { mint: MINTS.USDC } : token === "impostor" ? { mint: IMPOSTOR_MINT } : {}),
      from,
      to,
      blockTime: clock,
      slot,
      fee: 0.000005,
      status: random.chance(0.08) ? "failed" : "success",
      ...extra,
    };
  };
  /** A transaction a chain source would bring: a tracked wallet on one side. */
  const ordinary = () => {
    let from = party();
    let to = party();
    while (to === from) to = party();
    if (!tracked.has(wallets.indexOf(from)) && !tracked.has(wallets.indexOf(to))) from = trackedWallet();
    return tx(from, to);
  };

  /** Whom the crowd has paid; who has sent the dust wallet dust; the last very late transactions. */
  const crowdPaid: string[] = [];
  const dustSenders: string[] = [];
  let veryLate: { wallet: string; t: number } | null = null;
  const steps: Scenario["steps"] = [];
  const liveSlots = (...states: string[]) => status.flatMap((s, i) => (states.includes(s) && i !== limitSlot ? [i] : []));
  /** The limitFalls burst's first hour (Unix hours). */
  let burstHour = 0;
  for (let s = 0; s < STEPS; s++) {
    // Between steps: mostly minutes, sometimes hours; three months of silence two thirds in
    // (inside that step's batch: a backfill that spans it).
    const advance = random.weighted({ minutes: 7, hour: 2, hours: 1 }) === "minutes" ? random.int(10, 300) : random.int(600, 5 * 3600);
    clock += advance;
    let step: Step;
    if (s === Math.floor((STEPS * 2) / 3)) {
      const wallet = trackedWallet();
      const before = tx(wallet, party());
      clock += 95 * 86_400;
      step = { kind: "ingest", note: "backfill", txs: [before, tx(wallet, party()), ordinary(), ordinary()] };
    } else if (s === Math.floor(STEPS / 3)) {
      tracked.delete(DROPPED);
      for (const [slot, spec] of alerts.entries()) if (spec.owner === "alice" && spec.wallet === DROPPED) status[slot] = "deleted";
      step = { kind: "untrack", owner: "alice", wallet: DROPPED };
    } else if (s === Math.floor(STEPS / 3) + 6) {
      tracked.add(DROPPED);
      step = { kind: "track", owner: "alice", wallet: DROPPED };
    } else if (s === Math.floor(STEPS / 3) + 2) {
      // One of two callers lets a wallet go: the address stays tracked, bob's alerts go.
      for (const [slot, spec] of alerts.entries()) if (spec.owner === "bob" && spec.wallet === BOB_WALLETS[1]) status[slot] = "deleted";
      bobWallets.delete(BOB_WALLETS[1]!);
      step = { kind: "untrack", owner: "bob", wallet: BOB_WALLETS[1]! };
    } else if (s === Math.floor(STEPS / 3) + 9) {
      bobWallets.add(BOB_WALLETS[1]!);
      step = { kind: "track", owner: "bob", wallet: BOB_WALLETS[1]! };
    } else if (s === Math.floor(STEPS / 2)) {
      tracked.add(LATE);
      step = { kind: "track", owner: "alice", wallet: LATE };
    } else if (s === Math.floor(STEPS / 2) + 3) {
      step = { kind: "track", owner: "bob", wallet: LATE };
    } else if (options.crowd && CROWD_STEPS.includes(s)) {
      step = { kind: "ingest", ...crowdStep(s) };
    } else if (options.dust && DUST_STEPS.includes(s)) {
      step = { kind: "ingest", ...dustStep(s) };
    } else if (options.limitFalls && LIMIT_STEPS.includes(s)) {
      // Its steps keep to the burst's clock: the step's advance is taken back.
      if (s !== LIMIT_STEPS[0]) clock -= advance;
      step = limitStep(s);
    } else {
      const kind = random.weighted({ ingest: 56, helius: 10, labels: 9, alert: 8, status: 8, patch: 4, delete: 3 });
      if (kind === "labels") {
        // One to three addresses at once, now and then a tracked wallet's.
        const addresses = new Set(
          Array.from({ length: random.int(1, 3) }, () =>
            random.chance(0.15) ? trackedWallet() : random.chance(0.5) ? random.pick(labelled) : random.pick(strangers),
          ),
        );
        step = { kind: "labels", labels: [...addresses].map((address) => ({ address, ...random.pick(RELABELS) })) };
      } else if (kind === "alert" && alerts.length < 40) {
        const spec = random.chance(0.2) ? randomAlert(random, "bob", random.pick([...bobWallets])) : randomAlert(random, "alice", random.pick([...tracked]));
        status.push("active");
        step = { kind: "alert", slot: status.length - 1, spec };
        alerts.push(spec);
      } else if (kind === "status" && liveSlots("active", "paused").length > 0) {
        const slot = random.pick(liveSlots("active", "paused"));
        status[slot] = status[slot] === "active" ? "paused" : "active";
        step = { kind: "status", slot, status: status[slot] as "active" | "paused" };
      } else if (kind === "patch" && liveSlots("active", "paused").length > 0) {
        const slot = random.pick(liveSlots("active", "paused"));
        step = random.chance(0.5)
          ? { kind: "patch", slot, patch: { cooldownSeconds: random.pick([0, 600, 86_400]) } }
          : { kind: "patch", slot, patch: { threshold: thresholdFor(random, alerts[slot]!.condition) } };
      } else if (kind === "delete" && liveSlots("active", "paused").length > 4) {
        const slot = random.pick(liveSlots("active", "paused"));
        status[slot] = "deleted";
        step = { kind: "delete", slot };
      } else if (kind === "helius") {
        step = { kind: "helius", items: heliusStep() };
      } else {
        step = { kind: "ingest", ...ingestStep() };
      }
    }
    // Evaluated a few seconds after the newest transaction.
    steps.push({ ...step, now: clock + random.int(1, 5) });
  }

  /**
   * A Helius delivery: payouts to one to four accounts in SOL, some with a USDC transfer and its
   * token account's rent; swaps of SOL and USDC with a pool; NFT sales with a royalty; stakes.
   */
  function heliusStep(): HeliusItem[] {
    const lamports = (sol: number) => Math.round(sol * 1e9);
    const solAmount = () => (random.chance(0.12) ? random.between(100, 600) : random.between(0.01, 30));
    const items = Array.from({ length: random.int(1, 3) }, (): HeliusItem => {
      const payer = random.chance(0.75) ? trackedWallet() : party();
      const { blockTime, slot, signature } = tx(payer, payer);
      const tokenAccounts = () => ({ fromTokenAccount: random.address(), toTokenAccount: random.address() });
      const item = {
        signature,
        slot,
        timestamp: blockTime,
        fee: 5000,
        feePayer: payer,
        transactionError: random.chance(0.1) ? { InstructionError: [0, "Custom"] } : null,
      };
      const kind = random.weighted({ TRANSFER: 6, SWAP: 2, NFT_SALE: 1, STAKE_SOL: 1, UNKNOWN: 1 });
      const other = () => {
        let to = random.chance(0.3) ? random.address() : party();
        while (to === payer) to = party();
        return to;
      };
      if (kind === "SWAP") {
        // The payer gives SOL for USDC or USDC for SOL; the pool is a stranger or a DEX (labelled).
        const pool = other();
        const usdc = { fromUserAccount: pool, toUserAccount: payer, ...tokenAccounts(), mint: MINTS.USDC, tokenAmount: random.int(5, 900) };
        const sol = { fromUserAccount: payer, toUserAccount: pool, amount: lamports(solAmount()) };
        return random.chance(0.5)
          ? { ...item, type: kind, nativeTransfers: [sol], tokenTransfers: [usdc] }
          : { ...item, type: kind, nativeTransfers: [{ ...sol, fromUserAccount: pool, toUserAccount: payer }], tokenTransfers: [{ ...usdc, fromUserAccount: payer, toUserAccount: pool }] };
      }
      if (kind === "NFT_SALE") {
        // The payer buys an NFT: the price to the seller, a royalty to the creator, the NFT back.
        const [seller, creator] = [other(), other()];
        return {
          ...item,
          type: kind,
          nativeTransfers: [
            { fromUserAccount: payer, toUserAccount: seller, amount: lamports(solAmount()) },
            { fromUserAccount: payer, toUserAccount: creator, amount: lamports(random.between(0.01, 1)) },
          ],
          tokenTransfers: [{ fromUserAccount: seller, toUserAccount: payer, ...tokenAccounts(), mint: random.address(), tokenAmount: 1 }],
        };
      }
      if (kind === "STAKE_SOL") return { ...item, type: kind, nativeTransfers: [{ fromUserAccount: payer, toUserAccount: other(), amount: lamports(solAmount()) }], tokenTransfers: [] };
      if (kind === "UNKNOWN") return { ...item, type: kind, nativeTransfers: [], tokenTransfers: [] };
      const receivers = [...new Set(Array.from({ length: random.int(1, 4) }, other))];
      const nativeTransfers = receivers.map((to) => ({ fromUserAccount: payer, toUserAccount: to, amount: random.chance(0.1) ? 0 : lamports(solAmount()) }));
      const tokenTransfers = random.chance(0.35)
        ? [{ fromUserAccount: payer, toUserAccount: receivers[0]!, ...tokenAccounts(), mint: MINTS.USDC, tokenAmount: random.int(5, 900) }]
        : [];
      // The receiver's token account created on the way: its rent (under 0.01 SOL) is plumbing, not a payment.
      if (tokenTransfers[0] && random.chance(0.5)) nativeTransfers.push({ fromUserAccount: payer, toUserAccount: tokenTransfers[0].toTokenAccount, amount: 2_039_280 });
      return { ...item, type: kind, nativeTransfers, tokenTransfers };
    });
    // Helius delivers an item of an earlier delivery again, beside new ones.
    if (heliusSent.length > 0 && random.chance(0.15)) items.unshift(random.pick(heliusSent));
    heliusSent.push(...items);
    return items;
  }

  /** The crowd pays 560 new counterparties a second apart, or (after the clock has gone past an hour) some it paid before and a few new ones. */
  function crowdStep(s: number): { note: string; txs: ModelTx[] } {
    const again = s === CROWD_STEPS[2] || s === CROWD_STEPS[3];
    if (again) clock += 3600;
    const payees = again
      ? [...Array.from({ length: 14 }, () => crowdRandom.pick(crowdPaid)), ...Array.from({ length: 6 }, crowdRandom.address)]
      : Array.from({ length: 560 }, crowdRandom.address);
    crowdPaid.push(...payees);
    return {
      note: again ? "crowd again" : "crowd",
      txs: payees.map((to) => {
        clock += 1;
        slot += 2;
        const amount = crowdRandom.chance(0.02) ? crowdRandom.int(100, 300) : crowdRandom.int(1, 20) / 10;
        return { signature: crowdRandom.signature(), type: "transfer", amount, token: "SOL", from: wallets[CROWD]!, to, blockTime: clock, slot, fee: 0.000005, status: "success" };
      }),
    };
  }

  /**
   * A wave of dust from 12 fresh addresses (no new counterparty); the wallet paying 8 of them and
   * 4 fresh addresses, one of those sends failed (4 new); one batch in which 6 fresh addresses
   * send dust, the wallet pays them and 5 fresh addresses, then 4 more fresh ones that send dust
   * back (9 new: received from, then sent to, is not new; sent to, then received from, is; 15
   * counted out of chain order, sends first); two hours on, a batch in which the wallet pays 10
   * fresh addresses that each send dust back at once (a burst; none, counted receipts first).
   */
  function dustStep(s: number): { note: string; txs: ModelTx[] } {
    const W = wallets[dustWallet]!;
    const move = (from: string, to: string, amount: number, status: ModelTx["status"] = "success"): ModelTx => {
      clock += dustRandom.int(1, 20);
      slot += dustRandom.int(1, 40);
      return { signature: dustRandom.signature(), type: "transfer", amount, token: "SOL", from, to, blockTime: clock, slot, fee: 0.000005, status };
    };
    const dust = (count: number) => {
      const senders = Array.from({ length: count }, dustRandom.address);
      dustSenders.push(...senders);
      return senders.map((from) => move(from, W, DUST_SOL));
    };
    const pay = (to: string, status: ModelTx["status"] = "success") => move(W, to, dustRandom.int(1, 20) / 10, status);
    if (s === DUST_STEPS[0]) return { note: "dust", txs: dust(12) };
    if (s === DUST_STEPS[1]) {
      const fresh = Array.from({ length: 4 }, dustRandom.address);
      return { note: "dust paid back", txs: [...dustSenders.slice(0, 8).map((to) => pay(to)), ...fresh.map((to, k) => pay(to, k === 0 ? "failed" : "success"))] };
    }
    if (s === DUST_STEPS[2]) {
      const wave = dust(6);
      const paidFirst = Array.from({ length: 4 }, dustRandom.address);
      return {
        note: "dust and payments",
        txs: [
          ...wave,
          ...wave.map((w) => pay(w.from)),
          ...Array.from({ length: 5 }, () => pay(dustRandom.address())),
          ...paidFirst.map((to) => pay(to)),
          ...paidFirst.map((from) => move(from, W, DUST_SOL)),
        ],
      };
    }
    clock += 2 * 3600;
    return { note: "payments answered with dust", txs: Array.from({ length: 10 }, dustRandom.address).flatMap((to) => [pay(to), move(to, W, DUST_SOL)]) };
  }

  /** The limitFalls steps (LIMIT_STEPS): transfers to its wallet from a few fresh addresses, at the block times given. */
  function limitStep(s: number): Step {
    const W = wallets[limitWallet]!;
    const senders = Array.from({ length: 8 }, limitRandom.address);
    const receive = (blockTime: number): ModelTx => {
      slot += limitRandom.int(1, 40);
      const from = limitRandom.pick(senders);
      return { signature: limitRandom.signature(), type: "transfer", amount: 0.5, token: "SOL", from, to: W, blockTime, slot, fee: 0.000005, status: "success" };
    };
    const at = (minutes: number[]) => minutes.map((minute) => receive(burstHour * 3600 + minute * 60 + limitRandom.int(0, 50)));
    if (s === LIMIT_STEPS[0]) {
      burstHour = Math.floor(clock / 3600) + 2;
      return { kind: "ingest", note: "busy hour 169 hours back", txs: Array.from({ length: 672 }, (_, i) => receive((burstHour - 169) * 3600 + i * 5)) };
    }
    if (s === LIMIT_STEPS[1]) {
      const txs = at([50, 51, 52, 53, 54, 55, 56, 57, 58, 59]);
      clock = txs.at(-1)!.blockTime;
      return { kind: "ingest", note: "burst under the limit", txs };
    }
    if (s === LIMIT_STEPS[2] || s === LIMIT_STEPS[4]) {
      const txs = at([s === LIMIT_STEPS[2] ? 60 : 62]);
      clock = txs[0]!.blockTime;
      return { kind: "ingest", note: s === LIMIT_STEPS[2] ? "burst over the fallen limit" : "burst reported", txs };
    }
    clock += 5;
    return { kind: "patch", slot: limitSlot, patch: { threshold: 2.5 } };
  }

  function ingestStep(): { note: string; txs: ModelTx[] } {
    const shape = options.veryLate
      ? random.weighted({ mixed: 10, burst: 3, failing: 1, drain: 1, between: 2, replay: 1, self: 1, late: 2, veryLate: 4 })
      : random.weighted({ mixed: 10, burst: 3, failing: 1, drain: 1, between: 2, replay: 1, self: 1, late: 2 });
    const txs: ModelTx[] = [];
    const wallet = trackedWallet();
    switch (shape) {
      case "mixed":
        for (let k = random.int(1, 5); k > 0; k--) txs.push(ordinary());
        break;
      case "burst": // many new counterparties within a few minutes, now and then a labelled one
        for (let k = random.int(8, 25); k > 0; k--) txs.push(tx(wallet, random.chance(0.9) ? random.address() : party(), random.chance(0.5) ? { token: "SOL", type: "transfer" } : {}));
        break;
      case "failing":
        for (let k = random.int(10, 12); k > 0; k--) txs.push(tx(wallet, party(), { status: random.chance(0.45) ? "failed" : "success" }));
        break;
      case "drain":
        txs.push(tx(wallet, random.pick(strangers), { token: "SOL", type: random.pick(["transfer", "transfer", "swap", "stake"] as const), amount: random.int(120, 400) }));
        break;
      case "between": {
        let other = trackedWallet();
        while (other === wallet) other = trackedWallet();
        txs.push(tx(wallet, other), tx(other, wallet, { amount: random.int(100, 300) }));
        break;
      }
      case "replay": // a delivery repeated in part, beside new transactions
        for (let k = random.int(1, 3); k > 0 && ingested.length > 0; k--) txs.push(random.pick(ingested));
        txs.push(ordinary());
        break;
      case "self":
        txs.push(tx(wallet, wallet), ordinary());
        break;
      case "late": // a transaction up to an hour late (README: counted against its whole trailing hour), beside a current one
        txs.push(tx(wallet, party(), { blockTime: clock - random.int(60, 3599) }), ordinary());
        break;
      case "veryLate": {
        // One to three transactions one to five hours late, half the time near the last such ones
        // (so that a trailing hour holds several), beside a current one of the same wallet.
        const near = veryLate !== null && random.chance(0.5) ? veryLate : null;
        const from = near?.wallet ?? wallet;
        let t = near ? near.t + random.int(20, 300) : clock - random.int(3601, 5 * 3600);
        for (let k = random.int(1, 3); k > 0; k--, t += random.int(5, 60)) txs.push(tx(from, party(), { blockTime: t }));
        veryLate = { wallet: from, t };
        txs.push(tx(from, party()));
        break;
      }
    }
    ingested.push(...txs.filter((t) => !ingested.includes(t)));
    return { note: shape, txs };
  }

  const extraWallets = [...(options.crowd ? [CROWD] : []), ...(options.limitFalls ? [limitWallet] : [])];
  return {
    ...(extraWallets.length > 0 ? { extraWallets } : {}),
    wallets,
    labelled,
    strangers,
    balances: [{ wallet: 2, balance: 300 }],
    alerts: alerts.slice(0, initialAlerts),
    steps,
  };
}
