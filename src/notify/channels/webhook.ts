// Signed webhooks over one pooled, SSRF-checked undici Agent. One POST per attempt;
// 2xx is delivered; redirects are answered, not followed; the start of the receiver's answer
// is kept for the attempt log (RESPONSE_BODY_LIMIT, DELIVERED_BODY_LIMIT).
import { performance } from "node:perf_hooks";
import { request, type Dispatcher } from "undici";
import { PERMANENT_ERROR_CODES } from "../retry-policy.ts";
import { createSafeDispatcher, type ResolveAll } from "../safe-dispatcher.ts";
import { webhookHeaders } from "../sign.ts";
import type { AttemptResult, Channel, OutboundMessage } from "./index.ts";

export const USER_AGENT = "wallet-alerts/1.0";

// How much of the receiver's answer each attempt stores (delivery_attempts.response_body, read
// by an operator only: the API shows the status and error, never the body). The receiver
// chooses what it answers, and every attempt is kept until the operator prunes: at 64 KiB a
// receiver of the caller's own wrote 64 KiB of PostgreSQL per attempt, 3.5 MB for one dust
// transfer to a wallet with 50 webhook alerts. Nor is an answer read on past READ_BODY_LIMIT:
// its connection is closed there, so one that never ends costs nothing more.
/** Of an answer that is not 2xx: enough for an error's JSON or the top of its error page, the why of a failure. */
export const RESPONSE_BODY_LIMIT = 2 * 1024;
/**
 * Of a 2xx answer, only its start. The notification was delivered and the body changed nothing,
 * but its first line still tells a receiver from something else answering 200 at that URL (a
 * parked domain, a login page, a proxy's default page), the cause when an owner says a
 * "delivered" notification never came.
 */
export const DELIVERED_BODY_LIMIT = 256;
/**
 * How much of an answer is read at most, the part past the limits above read and dropped: an
 * answer read to its end leaves its connection for the next attempt to this receiver, where one
 * left unread is closed, and the next attempt pays a new connection and TLS handshake (a
 * receiver's 200 page is often a few KiB). Past this, the connection is closed.
 */
const READ_BODY_LIMIT = 64 * 1024;

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
    const status = response.statusCode;
    const delivered = status >= 200 && status < 300;
    const limit = delivered ? DELIVERED_BODY_LIMIT : RESPONSE_BODY_LIMIT;
    const responseBody = await readCapped(response.body, limit, (error) => describeError(error, options.timeoutMs).text);
    return {
      statusCode: status,
      retryAfter: header(response.headers["retry-after"]),
      responseBody,
      durationMs: elapsed(),
      error: delivered ? undefined : describeStatus(status, header(response.headers.location)),
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
 * Up to `limit` bytes of the body as text (NUL removed: Postgres text cannot hold it), cut
 * between characters. The rest is read and dropped up to READ_BODY_LIMIT, then left unread. A
 * body that breaks off (reset, stalled past the request's timeout, shorter than its
 * Content-Length) is kept as far as it came, followed by why it ended there.
 */
async function readCapped(
  body: AsyncIterable<Buffer> & { destroy: () => void },
  limit: number,
  describe: (error: unknown) => string,
): Promise<string> {
  const chunks: Buffer[] = [];
  let kept = 0;
  let read = 0;
  let brokeOff: string | undefined;
  try {
    for await (const chunk of body) {
      // One byte past the limit is kept too: it says whether the limit cuts a character.
      if (kept <= limit) {
        chunks.push(chunk);
        kept += chunk.length;
      }
      read += chunk.length;
      if (read > READ_BODY_LIMIT) break; // leaving the loop destroys the stream and its connection
    }
  } catch (error) {
    // Mostly ended by its error already; if not, this ends the half-read connection (never reused).
    body.destroy();
    brokeOff = describe(error);
  }
  const text = utf8Prefix(Buffer.concat(chunks), limit).toString("utf8").replaceAll("\u0000", "");
  return brokeOff === undefined ? text : `${text}\n[the response body broke off: ${brokeOff}]`;
}

/**
 * The first `limit` bytes of `bytes`, less a character the limit cuts in two (decoded, its
 * half would be kept as U+FFFD, a character the receiver never sent).
 */
function utf8Prefix(bytes: Buffer, limit: number): Buffer {
  if (bytes.length <= limit) return bytes;
  const continues = (at: number) => ((bytes[at] ?? 0) & 0xc0) === 0x80;
  // bytes[limit], the first byte left out, continuing a character: that character began before,
  // at most 3 bytes before (4 bytes at most). Text that is not UTF-8 is cut at the limit.
  let end = limit;
  while (end > limit - 3 && continues(end)) end -= 1;
  return bytes.subarray(0, continues(end) ? limit : end);
}
