// A seeded source of randomness for the synthetic feed: the same seed gives the same
// addresses, amounts and choices, so a run (or a test) can be repeated exactly.
// sfc32 (128-bit state, period ≥ 2^32 per seed, passes PractRand) seeded through splitmix32:
// fast enough for tens of thousands of transactions a second, and never Math.random.
import { base58Encode } from "../domain/base58.ts";

export type Random = {
  /** A float in [0, 1). */
  next: () => number;
  /** An integer in [min, max], both inclusive. */
  int: (min: number, max: number) => number;
  /** A float in [min, max). */
  between: (min: number, max: number) => number;
  chance: (probability: number) => boolean;
  pick: <T>(items: readonly T[]) => T;
  /** Picks by weight: `{ swap: 2, transfer: 1 }` gives swap two times in three. */
  weighted: <K extends string>(weights: Readonly<Record<K, number>>) => K;
  /** Log-normal around `median`: most values near it, a long tail of large ones. */
  logNormal: (median: number, sigma: number) => number;
  bytes: (length: number) => Uint8Array;
  /** A base58 Solana address (32 bytes). */
  address: () => string;
  /** A base58 transaction signature (64 bytes). */
  signature: () => string;
};

function splitmix32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x9e3779b9) >>> 0;
    let z = state;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    return (z ^ (z >>> 16)) >>> 0;
  };
}

/** `seed` and `stream` together pick the sequence: one seed, many independent streams. */
export function createRandom(seed: number, stream = 0): Random {
  const mix = splitmix32((Math.imul(seed >>> 0, 0x2545f491) ^ (stream >>> 0) ^ Math.floor(stream / 2 ** 32)) >>> 0);
  let a = mix();
  let b = mix();
  let c = mix();
  let d = mix();
  const uint32 = (): number => {
    const t = (((a + b) >>> 0) + d) >>> 0;
    d = (d + 1) >>> 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) >>> 0;
    c = ((c << 21) | (c >>> 11)) >>> 0;
    c = (c + t) >>> 0;
    return t;
  };
  for (let i = 0; i < 12; i++) uint32(); // let the state mix before the first use

  const next = () => uint32() / 2 ** 32;
  const bytes = (length: number) => {
    const out = new Uint8Array(length);
    for (let i = 0; i < length; i += 4) {
      const word = uint32();
      for (let j = 0; j < 4 && i + j < length; j++) out[i + j] = (word >>> (8 * j)) & 0xff;
    }
    return out;
  };
  const random: Random = {
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    between: (min, max) => min + next() * (max - min),
    chance: (probability) => next() < probability,
    pick: (items) => {
      if (items.length === 0) throw new Error("cannot pick from an empty list");
      return items[Math.floor(next() * items.length)]!;
    },
    weighted: (weights) => {
      const entries = Object.entries(weights) as [keyof typeof weights, number][];
      const total = entries.reduce((sum, [, w]) => sum + w, 0);
      let roll = next() * total;
      for (const [key, weight] of entries) {
        roll -= weight;
        if (roll < 0) return key;
      }
      return entries[entries.length - 1]![0];
    },
    logNormal: (median, sigma) => {
      // Box–Muller; 1 - next() keeps the logarithm away from 0.
      const z = Math.sqrt(-2 * Math.log(1 - next())) * Math.cos(2 * Math.PI * next());
      return median * Math.exp(sigma * z);
    },
    bytes,
    address: () => base58Encode(bytes(32)),
    signature: () => base58Encode(bytes(64)),
  };
  return random;
}
