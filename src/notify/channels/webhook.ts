// Signed webhooks over one pooled, SSRF-checked undici Agent. One POST per attempt;
// 2xx is delivered; redirects are answered, not followed; the receiver's answer is kept
// (first 64 KiB) for the attempt log.
import { performance } from "node:perf_hooks";
import { request, type Dispatcher } from "undici";
import { PERMANENT_ERROR_CODES } from "../retry-policy.ts";
import { createSafeDispatcher, type ResolveAll } from "../safe-dispatcher.ts";
import { webhookHeaders } from "../sign.ts";
import type { AttemptResult, Channel, OutboundMessage } from "./index.ts";

export const USER_AGENT = "wallet-alerts/1.0";
export const RESPONSE_BODY_LIMIT = 64 * 1024;

export type WebhookChannelOptions = {
  allowHttp: boolean;
  allowedCidrs: readonly string[];
  timeoutMs: number;
  resolve?: ResolveAll;
};

export type WebhookChannel = Channel & { describe: () => string; close: () => Promise<void> };

export function createWebhookChannel(options: WebhookChannelOptions): WebhookChannel {
  const dispatcher = createSafeDispatcher({
    allowedCidrs: options.allowedCidrs,
    connectTimeoutMs: options.timeoutMs,
    resolve: options.resolve,
  });

  const send = async (message: OutboundMessage): Promise<AttemptResult> => {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    const url = usableUrl(message.destination, options.allowHttp);
    if (typeof url === "string") {
      return { errorCode: PERMANENT_ERROR_CODES.badDestination, error: url, durationMs: 0 };
    }
    const body = JSON.stringify(message.payload);
    let response: Dispatcher.ResponseData;
    try {
      response = await request(url, {
        method: "POST",
        dispatcher,
        headers: {
          "content-type": "application/json",
          "user-agent": USER_AGENT,
          ...webhookHeaders(message.secrets, message.notificationId, message.attemptAt, body),
        },
        body,
        headersTimeout: options.timeoutMs,
        bodyTimeout: options.timeoutMs,
        // Headers and body together, so a receiver that trickles bytes cannot hold a worker slot.
        signal: AbortSignal.timeout(options.timeoutMs),
      });
    } catch (error) {
      const { code, text } = describeError(error, options.timeoutMs);
      return { errorCode: code, error: text, durationMs: elapsed() };
    }
    // The status is the receiver's answer (2xx = delivered); the body is only kept for the
    // attempt log, so a body that breaks off after it must not turn a 200 into a retry (the
    // receiver would get the notification again) or a 400 into one either.
    const responseBody = await readCapped(response.body, RESPONSE_BODY_LIMIT, (error) => describeError(error, options.timeoutMs).text);
    const status = response.statusCode;
    return {
      statusCode: status,
      retryAfter: header(response.headers["retry-after"]),
      responseBody,
      durationMs: elapsed(),
      error: status >= 200 && status < 300 ? undefined : describeStatus(status, header(response.headers.location)),
    };
  };

  return {
    send,
    describe: () => `signed POST, timeout ${options.timeoutMs} ms`,
    close: () => dispatcher.close(),
  };
}

/** The URL, or why it cannot be used. Creation checked it too; an operator may since have turned http off. */
function usableUrl(raw: string, allowHttp: boolean): URL | string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return "the webhook URL is not a valid URL";
  }
  if (url.protocol !== "https:" && !(url.protocol === "http:" && allowHttp)) {
    return `the webhook URL must use https${allowHttp ? " or http" : ""}`;
  }
  if (url.username !== "" || url.password !== "") return "the webhook URL must not contain credentials";
  return url;
}

function describeStatus(status: number, location: string | undefined): string {
  if (status >= 300 && status < 400) {
    return `HTTP ${status}: redirects are not followed${location ? ` (Location: ${location.slice(0, 200)})` : ""}`;
  }
  return `HTTP ${status}`;
}

function describeError(error: unknown, timeoutMs: number): { code: string; text: string } {
  const { name, code, message } = (error ?? {}) as { name?: string; code?: unknown; message?: string };
  if (name === "TimeoutError" || name === "AbortError" || code === "UND_ERR_HEADERS_TIMEOUT" || code === "UND_ERR_BODY_TIMEOUT") {
    return { code: typeof code === "string" ? code : "TIMEOUT", text: `no complete answer within ${timeoutMs} ms` };
  }
  const cause = (error as { cause?: { code?: unknown; message?: string } } | undefined)?.cause;
  const found = typeof code === "string" ? code : typeof cause?.code === "string" ? cause.code : "NETWORK_ERROR";
  return { code: found, text: `${found}: ${message ?? cause?.message ?? "request failed"}` };
}

function header(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/**
 * Up to `limit` bytes of the body as text (NUL removed: Postgres text cannot hold it); the rest
 * is dropped unread. A body that breaks off (reset, stalled past the request's timeout, shorter
 * than its Content-Length) is kept as far as it came, followed by why it ended there.
 */
async function readCapped(
  body: AsyncIterable<Buffer> & { destroy: () => void },
  limit: number,
  describe: (error: unknown) => string,
): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  let brokeOff: string | undefined;
  try {
    for await (const chunk of body) {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= limit) break; // leaving the loop destroys the stream and its connection
    }
  } catch (error) {
    // Mostly ended by its error already; if not, this ends the half-read connection (never reused).
    body.destroy();
    brokeOff = describe(error);
  }
  const text = Buffer.concat(chunks).subarray(0, limit).toString("utf8").replaceAll("\u0000", "");
  return brokeOff === undefined ? text : `${text}\n[the response body broke off: ${brokeOff}]`;
}
