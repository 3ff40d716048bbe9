// What the demo prints once it runs: where everything is, and a token to try the API with.
// Pure, so what it may and may not show is tested without starting the demo.

/**
 * Bull Board's password, and whether the demo made it up. A password the demo generated exists
 * for this run only and nothing else tells it, so it is shown; one set in the environment is the
 * operator's (in docker compose, `docker compose logs feed` would show it to anyone who can read
 * the logs) and is never printed, as passwords are redacted everywhere else in the logs.
 */
export type AdminPassword = { value: string; generated: boolean };

export type BannerFacts = {
  publicUrl: string;
  caller: string;
  wallets: number;
  adminUser: string;
  adminPassword: AdminPassword;
  sinkUrl: string | undefined;
  /** How email leaves: through SMTP_URL (as it may be shown, password hidden) or to files. */
  smtpUrl: string | undefined;
  twilio: boolean;
  token: string;
};

export function adminPasswordNote(password: AdminPassword): string {
  return password.generated ? `password ${password.value}, made up for this run` : "password from ADMIN_PASSWORD";
}

export function bannerLines(facts: BannerFacts): string[] {
  const url = facts.publicUrl;
  return [
    "",
    "wallet-alerts demo is running",
    `  API            ${url}/v1  (${facts.wallets} tracked wallets for caller "${facts.caller}")`,
    `  API docs       ${url}/docs`,
    `  Bull Board     ${url}/admin/queues   (user ${facts.adminUser}, ${adminPasswordNote(facts.adminPassword)})`,
    `  Metrics        ${url}/metrics        (same credentials)`,
    `  Webhook sink   ${facts.sinkUrl}`,
    `  Email          ${facts.smtpUrl ? `through ${facts.smtpUrl}` : "written to var/outbox/*.eml, not sent (EMAIL_TRANSPORT=outbox; set SMTP_URL to send)"}`,
    `  SMS            ${facts.twilio ? "through Twilio" : "logged by the worker at info, not sent (SMS_TRANSPORT=log; set TWILIO_* to send)"}`,
    "",
    "  Try it:",
    `    curl -H "Authorization: Bearer $TOKEN" ${url}/v1/wallets`,
    "  with",
    `    TOKEN=${facts.token}`,
    "  (valid for 24 hours; the demo's own feed keeps minting fresh ones)",
    "",
  ];
}
