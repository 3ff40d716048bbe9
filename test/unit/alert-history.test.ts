// What a change of an alert enters in its history (domain/alert-history.ts).
import { describe, expect, it } from "vitest";
import { changedSettings, createdChanges, patchAction, recordedWebhookUrl, type AlertSettingsView } from "../../src/domain/alert-history.ts";

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

  it("keeps a webhook URL without its query or fragment, marking where they were, so that a rotated token is an entry but never recorded", () => {
    const withToken = { ...alert, webhookUrl: "https://hooks.example:8443/a?token=SECRET-A#frag" };
    expect(createdChanges(withToken).webhookUrl).toEqual([null, "https://hooks.example:8443/a?…#…"]);
    // Only the token changed: still an entry, its two values alike.
    const rotated = changedSettings(withToken, { ...alert, webhookUrl: "https://hooks.example:8443/a?token=SECRET-B#frag" });
    expect(rotated).toEqual({ webhookUrl: ["https://hooks.example:8443/a?…#…", "https://hooks.example:8443/a?…#…"] });
    expect(patchAction(rotated)).toBe("updated");
    expect(changedSettings(withToken, { ...alert, webhookUrl: "https://hooks.example/b" })).toEqual({
      webhookUrl: ["https://hooks.example:8443/a?…#…", "https://hooks.example/b"],
    });
    expect(JSON.stringify([createdChanges(withToken), rotated])).not.toMatch(/SECRET|token=|frag/);
  });

  it("records a webhook URL as scheme, host, port and path only, and a recorded URL as itself", () => {
    expect(recordedWebhookUrl("https://user:pass@Hooks.Example:443/p/q?key=1")).toBe("https://hooks.example/p/q?…");
    expect(recordedWebhookUrl("http://127.0.0.1:9/hook")).toBe("http://127.0.0.1:9/hook");
    expect(recordedWebhookUrl(null)).toBeNull();
    for (const url of ["https://h.example/p?…", "https://h.example/p?…#…", "https://h.example/p#…"]) expect(recordedWebhookUrl(url)).toBe(url);
  });

  it("names a PATCH by its status when it changed it, else updated, and none when nothing changed", () => {
    expect(patchAction({ status: ["active", "paused"], threshold: [1, 2] })).toBe("paused");
    expect(patchAction({ status: ["disabled", "active"] })).toBe("resumed");
    expect(patchAction({ status: ["disabled", "paused"] })).toBe("paused");
    expect(patchAction({ cooldownSeconds: [0, 60] })).toBe("updated");
    expect(patchAction({})).toBeUndefined();
  });
});
