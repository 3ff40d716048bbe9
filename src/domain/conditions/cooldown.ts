// Cooldown: within `cooldownSeconds` of an alert's last notification, a new event is recorded
// as suppressed and not sent. The boundary belongs to the next notification: at exactly the
// cooldown the alert may speak again. A cooldown of 0 (the default) never suppresses.
// A lastNotifiedAt in the future (clock skew between processes) counts as "just now".

export function isSuppressedByCooldown(lastNotifiedAt: Date | null, cooldownSeconds: number, now: Date): boolean {
  if (lastNotifiedAt === null || !(cooldownSeconds > 0)) return false;
  const elapsedMs = now.getTime() - lastNotifiedAt.getTime();
  return elapsedMs < cooldownSeconds * 1000;
}
