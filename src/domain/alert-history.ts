// What one change of an alert changed, as its history (alert_changes, GET
// /v1/risk/alerts/{id}/history) records it: each setting by the API's name, [before, after].
// Pure: the writers read the alert as it was and as they left it, and this says what differs.
// A secret is no setting here, and never will be by accident: only the names listed are read.
// Nor is a webhook URL's query: the history keeps each URL as recordedWebhookUrl says.

import { webhookUrlShown } from "./recipient-mask.ts";

/** An alert's settings as the API shows them (AlertRow has these among others). */
export type AlertSettingsView = {
  walletId: string;
  condition: string;
  status: string;
  threshold: number;
  token: string | null;
  notificationMethod: string;
  webhookUrl: string | null;
  recipient: string | null;
  cooldownSeconds: number;
  /** large_transfer's window (seconds); absent or null for an alert without one. */
  windowSeconds?: number | null;
  /** large_transfer's ignoreOwnWallets; absent or false for an alert without it. */
  ignoreOwnWallets?: boolean;
  disabledReason: string | null;
};

/** What a creation lists (every one, nulls included) and a deletion too; disabledReason comes and goes with a disabling. */
export const ALERT_SETTINGS = [
  "walletId",
  "condition",
  "status",
  "threshold",
  "token",
  "notificationMethod",
  "webhookUrl",
  "recipient",
  "cooldownSeconds",
] as const satisfies ReadonlyArray<keyof AlertSettingsView>;

export type SettingName = keyof AlertSettingsView;
/** Per setting: [before, after], each null where there was none (before a creation, after a deletion). */
export type SettingChanges = { [Name in SettingName]?: [NonNullable<AlertSettingsView[Name]> | null, NonNullable<AlertSettingsView[Name]> | null] };

/**
 * created: by its owner; updated / paused / resumed: by its owner's PATCH; disabled: by the
 * service (alert health); secret_rotated: by its owner; deleted: by its owner, alone or with its wallet.
 */
export const ALERT_ACTIONS = ["created", "updated", "paused", "resumed", "disabled", "secret_rotated", "deleted"] as const;
export type AlertAction = (typeof ALERT_ACTIONS)[number];

/**
 * A creation: every setting, [null, value]; windowSeconds only for an alert that has one, and
 * ignoreOwnWallets only when on, so the entries of the alerts without (all of them before the
 * settings existed) read as they did.
 */
export function createdChanges(alert: AlertSettingsView): SettingChanges {
  const window = alert.windowSeconds == null ? {} : { windowSeconds: [null, alert.windowSeconds] };
  const ownWallets = alert.ignoreOwnWallets === true ? { ignoreOwnWallets: [null, true] } : {};
  return { ...Object.fromEntries(ALERT_SETTINGS.map((name) => [name, [null, recorded(alert, name)]])), ...window, ...ownWallets } as SettingChanges;
}

/**
 * Only the settings whose value differs, disabledReason included (a PATCH of status clears it).
 * Compared whole, recorded as recorded() says: a webhook URL whose token alone changed is an
 * entry whose two values read the same.
 */
export function changedSettings(before: AlertSettingsView, after: AlertSettingsView): SettingChanges {
  const names: SettingName[] = [...ALERT_SETTINGS, "windowSeconds", "ignoreOwnWallets", "disabledReason"];
  return Object.fromEntries(
    names.filter((name) => (before[name] ?? null) !== (after[name] ?? null)).map((name) => [name, [recorded(before, name), recorded(after, name)]]),
  ) as SettingChanges;
}

/** A setting's value as the history keeps it. */
function recorded(alert: AlertSettingsView, name: SettingName): NonNullable<AlertSettingsView[SettingName]> | null {
  return name === "webhookUrl" ? recordedWebhookUrl(alert.webhookUrl) : (alert[name] ?? null);
}

/**
 * A webhook URL as the history keeps it, for good (the alert's deletion too): scheme, host,
 * port and path, as GET /v1/notifications/{id} and the disabled notice show it, then `?…`
 * where it had a query and `#…` where it had a fragment. The query often carries the
 * receiver's token (`?token=…`), which the owner may replace because it leaked: a copy in the
 * history would outlive the rotation. The marks keep a rotation visible: an owner who replaced
 * only the token still finds its entry, `["https://h/p?…", "https://h/p?…"]`. A user and
 * password before the host are left out (the API refuses them anyway). Idempotent: a recorded
 * URL is recorded as itself.
 */
export function recordedWebhookUrl(url: string | null): string | null {
  return url === null ? null : webhookUrlShown(url, true);
}

/**
 * A PATCH's action: `paused` or `resumed` when it changed the status (to paused; to active from
 * paused or disabled), whatever else it changed with it (its changes list all of it); else
 * `updated`. Undefined when it changed nothing: a PATCH that sets what is already there leaves
 * no entry.
 */
export function patchAction(changes: SettingChanges): Extract<AlertAction, "updated" | "paused" | "resumed"> | undefined {
  const status = changes.status;
  if (status) return status[1] === "active" ? "resumed" : "paused";
  return Object.keys(changes).length > 0 ? "updated" : undefined;
}
