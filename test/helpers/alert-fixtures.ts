// Rows the alert tests need that other parts of the service write: tracked wallets, an
// address's risk score, and the events and notifications the pipeline records. Written
// straight into PostgreSQL so the alert tests stand on their own.
import { eq } from "drizzle-orm";
import { expect } from "vitest";
import { addressState, alertEvents, alerts, notifications, trackedWallets } from "../../src/db/schema.ts";
import { newId } from "../../src/ids.ts";
import type { TestApp } from "./app.ts";
import { randomAddress, randomSignature } from "./chain.ts";

export const auth = (token: string) => ({ authorization: `Bearer ${token}` });

export async function insertWallet(t: TestApp, owner: string, address = randomAddress()): Promise<{ walletId: string; address: string }> {
  const walletId = newId("wal");
  await t.deps.db.insert(trackedWallets).values({ id: walletId, owner, address });
  return { walletId, address };
}

export async function setRiskScore(t: TestApp, address: string, riskScore: number): Promise<void> {
  await t.deps.db
    .insert(addressState)
    .values({ address, riskScore })
    .onConflictDoUpdate({ target: addressState.address, set: { riskScore } });
}

export async function storedAlert(t: TestApp, alertId: string) {
  const [row] = await t.deps.db.select().from(alerts).where(eq(alerts.id, alertId));
  return row;
}

/** An alert_events row as the pipeline writes it, optionally with its notification. */
export async function insertEvent(
  t: TestApp,
  alertId: string,
  options: { createdAt: Date; observed?: number; suppressed?: boolean; signature?: string | null; notify?: boolean },
): Promise<{ eventId: string; signature: string | null; notificationId: string | null }> {
  const eventId = newId("evt", options.createdAt.getTime());
  const signature = options.signature === undefined ? randomSignature() : options.signature;
  await t.deps.db.insert(alertEvents).values({
    id: eventId,
    alertId,
    dedupeKey: signature ?? `score-change-${eventId}`,
    condition: "large_transfer",
    observed: String(options.observed ?? 2500),
    suppressed: options.suppressed ?? false,
    transactionSignature: signature,
    reason: "a transfer of 2500 SOL, at or above the 1000 SOL threshold",
    createdAt: options.createdAt,
  });
  if (!options.notify) return { eventId, signature, notificationId: null };
  const notificationId = newId("ntf", options.createdAt.getTime());
  await t.deps.db.insert(notifications).values({
    id: notificationId,
    alertId,
    eventId,
    channel: "webhook",
    destination: "http://127.0.0.1:9/hook",
    payload: {},
    createdAt: options.createdAt,
  });
  return { eventId, signature, notificationId };
}

type Answer = { statusCode: number; headers: Record<string, unknown>; json: () => unknown };
type Problem = { code: string; status: number; detail: string; requestId: string; errors?: { path: string; message: string }[] };

/** Asserts a problem+json answer with this status and code and returns its body. */
export function problem(res: Answer, status: number, code: string): Problem {
  expect(res.statusCode, JSON.stringify(res.json())).toBe(status);
  expect(String(res.headers["content-type"])).toMatch(/^application\/problem\+json/);
  const body = res.json() as Problem;
  expect(body).toMatchObject({ status, code, requestId: expect.any(String), detail: expect.any(String) });
  return body;
}

/** The field errors of a 400, as "path message" lines. */
export function fieldErrors(res: Answer): string[] {
  return (problem(res, 400, "validation_failed").errors ?? []).map((e) => `${e.path} ${e.message}`);
}
