import { hostname } from "node:os";
import { basename, extname } from "node:path";
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
  // The values accepted beside the current ones during a rotation (…_PREVIOUS), and the Helius header.
  "previousAuthToken",
  "*.previousAuthToken",
  "previousPassword",
  "*.previousPassword",
  "heliusAuthHeader",
  "previousHeliusAuthHeader",
  "previousSecret",
  "*.previousSecret",
  "config.jwt.secret",
  "config.jwt.previousSecret",
  "config.twilio.authToken",
  "config.twilio.previousAuthToken",
  "config.admin.password",
  "config.admin.previousPassword",
  "config.heliusAuthHeader",
  "config.previousHeliusAuthHeader",
  // ioredis attaches the failed command to a reply error: a refused AUTH carries the
  // password as its argument. Any command's arguments are data, not a diagnosis: all go.
  // Paths rather than an err serializer: Fastify's request loggers bring serializers of
  // their own, and redaction applies after whichever serializer ran.
  "err.command.args",
  "*.command.args",
  "err.aggregateErrors[*].command.args",
];

/**
 * Which process wrote a line: the command it runs (src/bin/api.ts is "api", worker.ts "worker",
 * queues.ts "queues", …), its pid and its host. Setting pino's `base` drops pino's own pid and
 * hostname, and without them a `job failed` from one of many workers, or an API line beside a
 * worker's, could not be traced to the process or host that wrote it.
 */
function processFields(role: string = entryScript()): { service: string; role: string; pid: number; hostname: string } {
  return { service: "wallet-alerts", role, pid: process.pid, hostname: hostname() };
}

/** The name of the script node was started with, without its folder and extension ("node" for none). */
function entryScript(): string {
  const script = process.argv[1];
  return script ? basename(script, extname(script)) : "node";
}

export function createLogger(level: string, destination?: DestinationStream, options: { role?: string } = {}): Logger {
  return pino(
    {
      level,
      redact: { paths: REDACT_PATHS, censor: "[redacted]" },
      base: processFields(options.role),
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    destination,
  );
}
