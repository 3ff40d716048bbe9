// What a change of an alert enters in its history (domain/alert-history.ts).
import { describe, expect, it } from "vitest";
import { changedSettings, createdChanges, patchAction, type AlertSettingsView } from "../../src/domain/alert-history.ts";

const alert: AlertSettingsView = {
  walletId: "wal_1",
  condition: "large_transfer",
  status: "active",
  threshold: 1000,
  token: "USDC",
  notificationMethod: "webhook",
  webhookUrl: "https://hooks.example/a",
  recipient: null,
  cooldownSeconds: 0,
  disabledReason: null,
};

describe("an alert's history entries", () => {
  it("lists every setting of a creation as [null, value], nulls too, and nothing else of the row", () => {
    const row = { ...alert, alertId: "alr_1", createdAt: "2026-11-28T00:00:00.000Z", webhookSecret: "whsec_x" };
    expect(createdChanges(row)).toEqual({
      walletId: [null, "wal_1"],
      condition: [null, "large_transfer"],
      status: [null, "active"],
      threshold: [null, 1000],
      token: [null, "USDC"],
      notificationMethod: [null, "webhook"],
      webhookUrl: [null, "https://hooks.example/a"],
      recipient: [null, null],
      cooldownSeconds: [null, 0],
    });
  });

  it("lists only what changed, disabledReason included", () => {
    const disabled = { ...alert, status: "disabled", disabledReason: "the webhook endpoint answered 410 Gone" };
    const resumed = { ...alert, threshold: 2000 };
    expect(changedSettings(disabled, resumed)).toEqual({
      status: ["disabled", "active"],
      threshold: [1000, 2000],
      disabledReason: ["the webhook endpoint answered 410 Gone", null],
    });
    expect(changedSettings(alert, { ...alert })).toEqual({});
  });

  it("names a PATCH by its status when it changed it, else updated, and none when nothing changed", () => {
    expect(patchAction({ status: ["active", "paused"], threshold: [1, 2] })).toBe("paused");
    expect(patchAction({ status: ["disabled", "active"] })).toBe("resumed");
    expect(patchAction({ status: ["disabled", "paused"] })).toBe("paused");
    expect(patchAction({ cooldownSeconds: [0, 60] })).toBe("updated");
    expect(patchAction({})).toBeUndefined();
  });
});
