// What a caller leaves in the database, made through the API and the real pipeline and delivery
// workers, for the erasure and scrub tests: wallets with an alias and tags, webhook (a token in
// its query), email and SMS alerts that fired and were delivered or refused (an SMTP server
// repeating the refused address, as Postfix does), destinations changed afterwards (history
// entries), a wallet deleted with its alert (the archive), an Idempotency-Key, a label load. And
// every row of every table as text, to search for what names a caller.
import { startTestApp, type TestApp } from "./app.ts";
import { randomAddress } from "./chain.ts";
import { startDeliveryWorkers } from "./delivery.ts";
import { settled, startWorkers, tx } from "./pipeline.ts";
import { bearer, ingestTransactions, trackWallet } from "./seed.ts";
import { startSmtpPeer, type SmtpPeer } from "./smtp-peer.ts";
import { waitFor } from "./wait.ts";
import { startWebhookReceiver, type WebhookReceiver } from "./webhook-receiver.ts";

export type FootprintRig = { t: TestApp; smtp: SmtpPeer; receiver: WebhookReceiver; close: () => Promise<void> };

/**
 * The app with the pipeline's workers, the delivery workers (email to an SMTP server on
 * loopback, SMS to the log) and a webhook receiver. A failed attempt is retried an hour later,
 * so every notification of a footprint has settled (delivered, or refused for good) when it is made.
 */
export async function startFootprintRig(label: string): Promise<FootprintRig> {
  const closers: (() => Promise<unknown>)[] = [];
  const close = async () => {
    for (const closeOne of [...closers].reverse()) await closeOne();
  };
  try {
    const smtp = await startSmtpPeer();
    closers.push(() => smtp.close());
    const receiver = await startWebhookReceiver();
    closers.push(() => receiver.close());
    const t = await startTestApp(label, { SMTP_URL: smtp.url, RETRY_SCHEDULE: "1h" });
    closers.push(() => t.close());
    const pipeline = startWorkers(t);
    closers.push(() => pipeline.close());
    const deliveries = startDeliveryWorkers(t, { smtpTimeoutMs: 5_000, webhookTimeoutMs: 5_000 });
    closers.push(() => deliveries.close());
    return { t, smtp, receiver, close };
  } catch (error) {
    await close();
    throw error;
  }
}

/** Where a caller's alerts send: each changed after the alert fired, so the old one is only in the record. */
export type CallerContacts = {
  /** The token's email claim: alerts.owner_email. */
  ownerEmail: string;
  /** The email alert's first recipient, refused by the SMTP server (550, naming it); then `laterEmail`. Also the archived alert's. */
  email: string;
  laterEmail: string;
  /** The SMS alert's first number, then `laterPhone`. */
  phone: string;
  laterPhone: string;
};

export type Footprint = {
  sub: string;
  token: string;
  contacts: CallerContacts;
  /** Every id of the caller's rows: wallets, alerts (live and archived), their events and notifications. */
  ids: string[];
  /** The caller's own words and secrets: aliases, tags, the webhook URL's token, the Idempotency-Key, every address and number. */
  personal: string[];
  /** The addresses the caller tracks (shared chain data names them too). */
  addresses: string[];
  /** The live email and SMS alerts. */
  emailAlertId: string;
  smsAlertId: string;
};

async function api(t: TestApp, token: string, method: "POST" | "PATCH" | "PUT" | "DELETE", url: string, payload?: object, headers: Record<string, string> = {}) {
  const res = await t.app.inject({ method, url, headers: { ...bearer(token), ...headers }, ...(payload ? { payload } : {}) });
  if (res.statusCode >= 300) throw new Error(`${method} ${url} answered ${res.statusCode}: ${res.body}`);
  return res.statusCode === 204 ? undefined : res.json<Record<string, string>>();
}

/** Fires every alert on `address` (a 2,500 SOL transfer over their 1,000) and waits until each has a settled notification. */
async function fire(t: TestApp, token: string, address: string, alertIds: string[]): Promise<void> {
  await ingestTransactions(t, token, [tx({ from: address, to: randomAddress(), amount: 2_500, blockTime: Math.floor(Date.now() / 1000) })]);
  await settled(t);
  await waitFor(`a settled notification for each of ${alertIds.join(", ")}`, async () => {
    const [row] = await t.deps.sql<{ n: number }[]>`
      select count(distinct alert_id)::int as n from notifications
      where alert_id = any(${alertIds}::text[]) and status in ('delivered', 'failed')`;
    return row!.n === alertIds.length;
  });
}

/** A caller's footprint, made through the API as a client would, and the pipeline and deliveries as they run. */
export async function makeFootprint(rig: FootprintRig, sub: string, contacts: CallerContacts): Promise<Footprint> {
  const { t } = rig;
  const token = await t.token(sub, undefined, { email: contacts.ownerEmail });
  const alias = `${sub} treasury (John Roe)`;
  const tag = `${sub}-watchlist`;
  const urlToken = `${sub}-RECEIVER-SECRET`;
  const idempotencyKey = `${sub}-create-email`;
  const kept = await trackWallet(t, token, { alias, tags: [tag] });
  const gone = await trackWallet(t, token, { alias: `${alias} (old)` });
  const alert = (walletId: string, method: object, headers: Record<string, string> = {}) =>
    api(t, token, "POST", "/v1/risk/alerts", { walletId, condition: "large_transfer", threshold: 1_000, ...method }, headers).then((body) => body!.alertId!);

  const route = rig.receiver.route(`/${sub}/hook`);
  const webhookAlertId = await alert(kept.walletId, { notificationMethod: "webhook", webhookUrl: `${route.url}?token=${urlToken}` });
  const emailAlertId = await alert(kept.walletId, { notificationMethod: "email", recipient: contacts.email }, { "idempotency-key": idempotencyKey });
  const smsAlertId = await alert(kept.walletId, { notificationMethod: "sms", recipient: contacts.phone });
  const archivedAlertId = await alert(gone.walletId, { notificationMethod: "email", recipient: contacts.email });

  rig.smtp.rejectRecipient(contacts.email, 550, `<${contacts.email}>: Recipient address rejected: User unknown in virtual mailbox table`);
  await fire(t, token, kept.address, [webhookAlertId, emailAlertId, smsAlertId]);
  await fire(t, token, gone.address, [archivedAlertId]);
  await api(t, token, "PATCH", `/v1/risk/alerts/${emailAlertId}`, { recipient: contacts.laterEmail });
  await api(t, token, "PATCH", `/v1/risk/alerts/${smsAlertId}`, { recipient: contacts.laterPhone });
  await api(t, token, "DELETE", `/v1/wallets/${gone.walletId}`);
  await api(t, token, "PUT", "/v1/risk/labels", { labels: [{ address: randomAddress(), category: "scam", score: 80, source: "vendor-list" }] });
  // The load's rescore (label_rescores) done, so that nothing moves while a test compares the tables.
  await waitFor("the label load's rescore", async () => (await t.deps.sql`select 1 from label_rescores`).length === 0);

  const alertIds = [webhookAlertId, emailAlertId, smsAlertId, archivedAlertId];
  const [record] = await t.deps.sql<{ ids: string[] }[]>`
    select coalesce(array_agg(id), '{}') as ids from (
      select id from alert_events where alert_id = any(${alertIds}::text[])
      union all select id from deleted_alert_events where alert_id = any(${alertIds}::text[])
      union all select id from notifications where alert_id = any(${alertIds}::text[])
      union all select id from deleted_notifications where alert_id = any(${alertIds}::text[])) ids`;
  return {
    sub,
    token,
    contacts,
    ids: [kept.walletId, gone.walletId, ...alertIds, ...record!.ids],
    personal: [sub, alias, tag, urlToken, idempotencyKey, ...Object.values(contacts)],
    addresses: [kept.address, gone.address],
    emailAlertId,
    smsAlertId,
  };
}

/** Every row of every table of the schema, as its jsonb text, by table. */
export async function everyRow(t: TestApp): Promise<Map<string, string[]>> {
  const tables = await t.deps.sql<{ name: string }[]>`
    select table_name as name from information_schema.tables
    where table_schema = 'public' and table_type = 'BASE TABLE' order by table_name`;
  const rows = new Map<string, string[]>();
  for (const { name } of tables) {
    const found = await t.deps.sql<{ row: string }[]>`select to_jsonb(r)::text as row from ${t.deps.sql(name)} r`;
    rows.set(name, found.map((r) => r.row).sort());
  }
  return rows;
}

/** The rows (as "table: row") that hold any of `needles`, compared case-insensitively. */
export function rowsHolding(rows: Map<string, string[]>, needles: readonly string[]): string[] {
  const lowered = needles.map((needle) => needle.toLowerCase());
  return [...rows].flatMap(([table, texts]) =>
    texts.filter((text) => lowered.some((needle) => text.toLowerCase().includes(needle))).map((text) => `${table}: ${text}`),
  );
}
