// Which way email and SMS leave this deployment, or that they cannot: read by the API (which
// refuses alerts on a channel that is off), the worker (which says so at start and fails such
// notifications as the deployment's fault) and the channels themselves. One function of the
// settings, so the three agree: they share the same environment.
import type { Config, EmailTransport, SmsTransport } from "../config.ts";
import type { NotificationMethod } from "../domain/types.ts";

type TransportSettings = Pick<Config, "smtpUrl" | "emailTransport" | "twilio" | "smsTransport">;

/** SMTP when SMTP_URL is set; the outbox only when EMAIL_TRANSPORT=outbox says so; else off. */
export function emailTransportOf(config: Pick<TransportSettings, "smtpUrl" | "emailTransport">): EmailTransport | undefined {
  if (config.smtpUrl) return "smtp";
  return config.emailTransport === "outbox" ? "outbox" : undefined;
}

/** Twilio when its three credentials are set; the log only when SMS_TRANSPORT=log says so; else off. */
export function smsTransportOf(config: Pick<TransportSettings, "twilio" | "smsTransport">): SmsTransport | undefined {
  const { accountSid, authToken, from } = config.twilio;
  if (accountSid && authToken && from) return "twilio";
  return config.smsTransport === "log" ? "log" : undefined;
}

/** The channels a notification cannot leave by (webhooks always can), in a fixed order. */
export function channelsOff(config: TransportSettings): NotificationMethod[] {
  const off: NotificationMethod[] = [];
  if (emailTransportOf(config) === undefined) off.push("email");
  if (smsTransportOf(config) === undefined) off.push("sms");
  return off;
}

/** What turns a channel on, for the messages that say it is off. */
export const SETTINGS_OF_CHANNEL: Readonly<Record<Exclude<NotificationMethod, "webhook">, string>> = {
  email: "SMTP_URL (or EMAIL_TRANSPORT=outbox to write .eml files that nobody receives)",
  sms: "TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN and TWILIO_FROM (or SMS_TRANSPORT=log to log SMS that nobody receives)",
};

/** The sentence that says a channel is off, for a caller's 400 and an attempt's error alike. */
export function channelOffMessage(channel: Exclude<NotificationMethod, "webhook">): string {
  return `${channel} is not configured on this service: its operator has not set ${SETTINGS_OF_CHANNEL[channel]}`;
}

/** The worker's start-up warning for the off channels among those it serves; undefined when none. */
export function channelsOffWarning(off: readonly NotificationMethod[]): string | undefined {
  const named = off.filter((channel): channel is Exclude<NotificationMethod, "webhook"> => channel !== "webhook");
  if (named.length === 0) return undefined;
  return (
    `${named.join(" and ")} not configured: such notifications are not sent (each is retried on its schedule, then fails) and the API refuses new alerts, tests and redeliveries on ${named.length > 1 ? "these channels" : "this channel"}; ` +
    named.map((channel) => `for ${channel} set ${SETTINGS_OF_CHANNEL[channel]}`).join("; ")
  );
}
