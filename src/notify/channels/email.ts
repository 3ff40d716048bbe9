// Email through nodemailer: a pooled SMTP transport to SMTP_URL, or — with EMAIL_TRANSPORT=outbox
// and no SMTP_URL — a stream transport that writes each message as an .eml file under
// var/outbox/, so the demo shows real messages without a mail server: recorded as delivered
// (the attempt says where it went, and the metric says not_sent). With neither, email is off:
// each attempt fails as the deployment's fault, retried on its schedule (notify/transports.ts).
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { domainToASCII } from "node:url";
import nodemailer from "nodemailer";
import addressparser from "nodemailer/lib/addressparser";
import { PERMANENT_ERROR_CODES } from "../retry-policy.ts";
import { renderEmail, type RenderedEmail } from "../render.ts";
import { withoutPeerAddress } from "./peer-address.ts";
import { smtpFault } from "./smtp-faults.ts";
import type { AttemptResult, EmailChannel, OutboundMessage } from "./index.ts";
import { redactUrl } from "../../redact-url.ts";
import { isLoopbackHost } from "../../config-parsers.ts";
import type { EmailTransport } from "../../config.ts";
import { channelOffMessage, emailTransportOf } from "../transports.ts";

export type EmailChannelOptions = {
  smtpUrl: string | undefined;
  /** EMAIL_TRANSPORT: only `outbox` (without smtpUrl) writes files; smtpUrl alone is SMTP. */
  transport?: EmailTransport | undefined;
  from: string;
  timeoutMs: number;
  outboxDir: string;
  /** EXPLORER_TX_URL: the link each alert email gives to its transaction; undefined: none. */
  explorerTxUrl?: string | undefined;
  /** EXPLORER_ADDRESS_URL: the links each alert email gives to its wallet and counterparty; undefined: none. */
  explorerAddressUrl?: string | undefined;
};

/**
 * Whether an smtp:// login must wait for STARTTLS. nodemailer uses STARTTLS only when the
 * server offers it, so anyone on the path who strips the offer from the server's EHLO reply
 * reads SMTP_URL's password (and every alert). With credentials, off this machine, the send
 * fails instead (and is retried) until the server offers TLS. smtps:// is TLS from the start;
 * without credentials there is no password to lose (a relay on a private network, Mailpit).
 */
export function loginNeedsTls(smtpUrl: string): boolean {
  const url = new URL(smtpUrl);
  return url.protocol === "smtp:" && (url.username !== "" || url.password !== "") && !isLoopbackHost(url.hostname);
}

type SentInfo = { response?: string; message?: Buffer | string };

export function createEmailChannel(
  options: EmailChannelOptions,
): EmailChannel & { describe: () => string; close: () => Promise<void> } {
  const mode = emailTransportOf({ smtpUrl: options.smtpUrl, emailTransport: options.transport });
  const transport = options.smtpUrl
    ? nodemailer.createTransport({
        url: options.smtpUrl,
        pool: true,
        maxConnections: 5,
        connectionTimeout: options.timeoutMs,
        greetingTimeout: options.timeoutMs,
        socketTimeout: options.timeoutMs,
        // Nothing we send refers to files or URLs; refuse them outright.
        disableFileAccess: true,
        disableUrlAccess: true,
        // SMTP_URL's own `?requireTLS=false` still wins: nodemailer lets the URL's options override.
        ...(loginNeedsTls(options.smtpUrl) ? { requireTLS: true } : {}),
      })
    : nodemailer.createTransport({ streamTransport: true, buffer: true, newline: "unix" });
  let outboxReady: Promise<unknown> | undefined;
  const messageIdDomain = domainOfSender(options.from);

  const deliver = async (to: string, email: RenderedEmail, fileStem: string, messageId?: string): Promise<AttemptResult> => {
    // Nothing to send with: the deployment's to fix, never the recipient's (retry-policy.ts).
    if (mode === undefined) return { deploymentFault: "unconfigured", error: `not sent: ${channelOffMessage("email")}`, durationMs: 0 };
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    try {
      const info = (await transport.sendMail({
        from: options.from,
        to,
        subject: email.subject,
        text: email.text,
        html: email.html,
        ...(messageId ? { messageId } : {}),
        // RFC 3834: machine-sent; an out-of-office or vacation responder must not answer it.
        headers: { "Auto-Submitted": "auto-generated" },
        // The whole send within the channel's timeout, as a webhook's: nodemailer's own timeouts
        // are per step, so a server slow at every reply ran a send past the worker's shutdown
        // wait, which cut it (and a restarted worker sent it again). The pool closes the
        // connection of a send it aborts; the retry carries the same Message-ID.
        ...(options.smtpUrl ? { signal: AbortSignal.timeout(options.timeoutMs) } : {}),
      })) as SentInfo;
      if (!options.smtpUrl) {
        outboxReady ??= mkdir(options.outboxDir, { recursive: true });
        await outboxReady;
        await writeFile(join(options.outboxDir, `${fileStem}.eml`), info.message ?? "");
        return {
          durationMs: elapsed(),
          notSent: true,
          responseBody: `not sent: written to ${options.outboxDir}/${fileStem}.eml (EMAIL_TRANSPORT=outbox)`,
        };
      }
      const reply = info.response ?? "";
      const code = /^(\d{3})/.exec(reply)?.[1];
      return { smtpResponseCode: code ? Number(code) : undefined, responseBody: reply.slice(0, 1000), durationMs: elapsed() };
    } catch (error) {
      return { ...describeSmtpError(error, options.timeoutMs), durationMs: elapsed() };
    }
  };

  return {
    send: (message: OutboundMessage) => {
      const links = { explorerTxUrl: options.explorerTxUrl, explorerAddressUrl: options.explorerAddressUrl };
      // attemptAt: an email sent late says so (lateness.ts), as the SMS does.
      const email = renderEmail(message.payload, links, message.attemptAt);
      return deliver(message.destination, email, message.notificationId, messageIdFor(message.notificationId, messageIdDomain));
    },
    sendMail: (to, email) => deliver(to, email, `notice-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`),
    describe: () =>
      options.smtpUrl
        ? `SMTP ${redactUrl(options.smtpUrl)}`
        : mode === "outbox"
          ? `.eml files in ${options.outboxDir}/, not sent (EMAIL_TRANSPORT=outbox)`
          : "off (SMTP_URL not set)",
    close: async () => {
      transport.close();
    },
  };
}

/** What Message-ID says after the "@" when EMAIL_FROM has no usable domain. */
const FALLBACK_MESSAGE_ID_DOMAIN = "wallet-alerts";

/**
 * The notification id in Message-ID lets a mail client thread retries and spot duplicates,
 * so it is the same on every attempt. The right-hand side is the sender's domain: spam
 * filters score a Message-ID whose right-hand side is not a domain (MID_RHS_NOT_FQDN).
 */
export function messageIdFor(notificationId: string, domain: string | undefined): string {
  return `<${notificationId}@${domain ?? FALLBACK_MESSAGE_ID_DOMAIN}>`;
}

/** The domain of EMAIL_FROM's address ("Name <alerts@example.com>" → "example.com"), in ASCII; undefined without one. */
export function domainOfSender(from: string): string | undefined {
  const address = addressparser(from, { flatten: true })[0]?.address ?? "";
  const at = address.lastIndexOf("@");
  // domainToASCII: an internationalised domain in its punycode form (headers are ASCII), "" when invalid.
  const domain = at === -1 ? "" : domainToASCII(address.slice(at + 1));
  return domain === "" ? undefined : domain;
}

/** nodemailer's code for a send its `signal` aborted (here: the timeout). */
const ABORTED = "EABORT";

function describeSmtpError(error: unknown, timeoutMs: number): Omit<AttemptResult, "durationMs"> {
  const { code, responseCode, response, message, command } = (error ?? {}) as {
    code?: unknown;
    responseCode?: unknown;
    response?: unknown;
    message?: string;
    command?: unknown;
  };
  const smtpResponseCode = typeof responseCode === "number" ? responseCode : undefined;
  const text =
    typeof response === "string" && response !== ""
      ? response
      : code === ABORTED
        ? `the SMTP server did not take the message within the ${Math.round(timeoutMs / 1000)} s timeout`
        : (message ?? "sending failed");
  let errorCode = typeof code === "string" ? code : "ESOCKET";
  // A message or envelope refused before any server reply (no recipient, bad address) never improves.
  if (smtpResponseCode === undefined && (errorCode === "EENVELOPE" || errorCode === "EMESSAGE")) {
    errorCode = PERMANENT_ERROR_CODES.badMessage;
  }
  const logLine = `${smtpResponseCode ?? errorCode}: ${withoutPeerAddress(text)}`.slice(0, 1000);
  return { errorCode, smtpResponseCode, ...smtpFault({ errorCode, smtpResponseCode, command, text }), error: logLine };
}
