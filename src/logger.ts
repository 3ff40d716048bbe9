import { pino, type Logger, type DestinationStream } from "pino";

export type { Logger };

// Secrets must never reach a log line, whichever object carries them.
export const REDACT_PATHS = [
  "req.headers.authorization",
  "req.headers.cookie",
  "req.headers[\"x-helius-auth\"]",
  "headers.authorization",
  "authorization",
  "token",
  "*.token",
  "accessToken",
  "password",
  "*.password",
  "secret",
  "*.secret",
  "webhookSecret",
  "*.webhookSecret",
  "webhook_secret",
  "*.webhook_secret",
  "previousWebhookSecrets",
  "*.previousWebhookSecrets",
  "authToken",
  "*.authToken",
  "config.jwt.secret",
  "config.twilio.authToken",
  "config.admin.password",
  // ioredis attaches the failed command to a reply error: a refused AUTH carries the
  // password as its argument. Any command's arguments are data, not a diagnosis: all go.
  // Paths rather than an err serializer: Fastify's request loggers bring serializers of
  // their own, and redaction applies after whichever serializer ran.
  "err.command.args",
  "*.command.args",
  "err.aggregateErrors[*].command.args",
];

export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      redact: { paths: REDACT_PATHS, censor: "[redacted]" },
      base: { service: "wallet-alerts" },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    destination,
  );
}
