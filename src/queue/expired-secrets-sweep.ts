// The maintenance sweep's drop of replaced webhook secrets past their grace period
// (db/queries/expired-secrets.ts). That statement reads every alert (0.8-1.1 s at a million
// alerts), and a secret kept some minutes past its 24 h harms nobody, so it runs at most once
// per DROP_EXPIRED_SECRETS_EVERY_MS across all workers, not with each 30 s sweep: the first
// sweep after the period claims it with a key in Redis, as the sweep's other state is kept
// (whichever worker takes the scheduled job runs it; a key in one process's memory would let
// each worker run it).
import { dropExpiredPreviousSecrets } from "../db/queries/expired-secrets.ts";
import type { Deps } from "../deps.ts";

export const DROP_EXPIRED_SECRETS_EVERY_MS = 10 * 60_000;

export type ExpiredSecretsSweepDeps = Pick<Deps, "sql" | "redis" | "now"> & { config: Pick<Deps["config"], "queuePrefix"> };

const claimKey = (prefix: string) => `${prefix}:expired-secrets-swept`;

/**
 * Drops the expired replaced secrets if no sweep did within the period; returns how many alerts
 * changed, or undefined when it was not this sweep's turn. A drop that fails gives its turn back,
 * so the next sweep tries again rather than the next period.
 */
export async function sweepExpiredSecrets(deps: ExpiredSecretsSweepDeps): Promise<number | undefined> {
  const key = claimKey(deps.config.queuePrefix);
  if ((await deps.redis.set(key, String(process.pid), "PX", DROP_EXPIRED_SECRETS_EVERY_MS, "NX")) === null) return undefined;
  try {
    return await dropExpiredPreviousSecrets(deps.sql, deps.now());
  } catch (error) {
    await deps.redis.del(key).catch(() => {});
    throw error;
  }
}
