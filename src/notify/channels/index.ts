// The three ways a notification leaves the service. Each channel turns one message into
// one attempt result in its protocol's own terms (HTTP status, SMTP reply, error code);
// retry-policy.ts decides what the result means, the deliver job records it.
import type { Config } from "../../config.ts";
import type { NotificationPayload } from "../../domain/types.ts";
import type { Logger } from "../../logger.ts";
import type { DeliveryOutcome } from "../retry-policy.ts";
import type { RenderedEmail } from "../render.ts";
import type { ResolveAll } from "../safe-dispatcher.ts";
import { createEmailChannel } from "./email.ts";
import { createSmsChannel } from "./sms.ts";
import { createWebhookChannel } from "./webhook.ts";
import { emailTransportOf, smsTransportOf } from "../transports.ts";

export type OutboundMessage = {
  notificationId: string;
  /** The webhook URL, email address or E.164 number the notification row names. */
  destination: string;
  payload: NotificationPayload;
  /** Webhook only: the secrets that sign this attempt (the current one first). */
  secrets: readonly string[];
  attemptAt: Date;
};

export type AttemptResult = DeliveryOutcome & {
  durationMs: number;
  /** One line for the attempt log when the message did not get through. */
  error?: string;
  /** What the peer answered, already cut to a storable size. */
  responseBody?: string;
  /** The provider's id of the message it accepted (a Twilio SMS's sid): its status callbacks name it. */
  providerMessageId?: string;
  /** Taken by an opted-in fallback (EMAIL_TRANSPORT=outbox, SMS_TRANSPORT=log): it reached nobody. */
  notSent?: true;
};

export type Channel = { send: (message: OutboundMessage) => Promise<AttemptResult> };

export type EmailChannel = Channel & {
  /** A message of our own (the disabled-alert notice), not rendered from a payload. */
  sendMail: (to: string, email: RenderedEmail) => Promise<AttemptResult>;
};

export type Channels = {
  webhook: Channel;
  email: EmailChannel;
  sms: Channel;
  /** How each channel is set up, for the startup log and the demo banner. */
  describe: () => { webhook: string; email: string; sms: string };
  close: () => Promise<void>;
};

export type ChannelOptions = {
  /** Webhook timeout for headers and body together (15 s); tests shorten it. */
  webhookTimeoutMs?: number;
  /** SMTP connection, greeting and socket timeouts (15 s). */
  smtpTimeoutMs?: number;
  /** Twilio API request timeout (15 s). */
  smsTimeoutMs?: number;
  /** Replaces DNS for webhook hosts (tests). */
  resolve?: ResolveAll;
  /** Where email goes with EMAIL_TRANSPORT=outbox (var/outbox). */
  outboxDir?: string;
};

export const DEFAULT_CHANNEL_TIMEOUT_MS = 15_000;

export function createChannels(config: Config, logger: Logger, options: ChannelOptions = {}): Channels {
  const webhook = createWebhookChannel({
    allowHttp: config.webhookAllowHttp,
    allowedCidrs: config.webhookAllowedCidrs,
    timeoutMs: options.webhookTimeoutMs ?? DEFAULT_CHANNEL_TIMEOUT_MS,
    resolve: options.resolve,
  });
  const email = createEmailChannel({
    transport: emailTransportOf(config),
    smtpUrl: config.smtpUrl,
    from: config.emailFrom,
    timeoutMs: options.smtpTimeoutMs ?? DEFAULT_CHANNEL_TIMEOUT_MS,
    outboxDir: options.outboxDir ?? "var/outbox",
    explorerTxUrl: config.explorerTxUrl,
    explorerAddressUrl: config.explorerAddressUrl,
  });
  const sms = createSmsChannel({
    twilio: config.twilio,
    transport: smsTransportOf(config),
    allowedCountries: config.smsAllowedCountries,
    timeoutMs: options.smsTimeoutMs ?? DEFAULT_CHANNEL_TIMEOUT_MS,
    logger,
  });
  let closed = false;
  return {
    webhook,
    email,
    sms,
    describe: () => ({ webhook: webhook.describe(), email: email.describe(), sms: sms.describe() }),
    close: async () => {
      if (closed) return;
      closed = true;
      await Promise.allSettled([webhook.close(), email.close(), sms.close()]);
    },
  };
}
