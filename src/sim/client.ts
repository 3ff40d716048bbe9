// A small client of the public API for the simulator (and any other chain source written in
// TypeScript): post transaction batches and account snapshots, track wallets, load labels.
// 429 and 503 are waited out (Retry-After when the server gives one, else a doubling
// backoff) and so are refused or reset connections; every other failure is an ApiError.
import { Pool } from "undici";
import type { Transaction } from "../domain/types.ts";
import type { AccountSnapshot, SimLabel } from "./population.ts";

export class ApiError extends Error {
  override name = "ApiError";
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

export type ApiClient = {
  postTransactions: (transactions: readonly Transaction[]) => Promise<{ accepted: number; duplicates: number }>;
  postAccounts: (accounts: readonly AccountSnapshot[]) => Promise<{ accepted: number }>;
  /** POST /v1/wallets; a wallet the caller already tracks (409) is fine too. */
  trackWallet: (body: { address: string; alias?: string; tags?: string[] }) => Promise<"created" | "exists">;
  putLabels: (labels: readonly SimLabel[]) => Promise<{ upserted: number }>;
  close: () => Promise<void>;
};

export type ApiClientOptions = {
  /** The API's base address, e.g. http://127.0.0.1:3000 (a path prefix is kept). */
  baseUrl: string;
  /** The bearer token, or where to get the one for each request (a long run renews its token). */
  token: string | (() => Promise<string>);
  maxAttempts?: number;
  connections?: number;
  sleep?: (ms: number) => Promise<void>;
};

const RETRY_STATUSES = new Set([429, 503]);
const RETRY_ERRORS = new Set(["ECONNREFUSED", "ECONNRESET", "EPIPE", "UND_ERR_SOCKET", "UND_ERR_CONNECT_TIMEOUT"]);
const MAX_WAIT_MS = 30_000;

/** Retry-After in seconds (the API sends seconds), clamped; else 250 ms doubling to 5 s. */
export function retryDelayMs(attempt: number, retryAfter: string | undefined): number {
  const seconds = retryAfter !== undefined && /^\d+(\.\d+)?$/.test(retryAfter) ? Number(retryAfter) : undefined;
  if (seconds !== undefined) return Math.min(MAX_WAIT_MS, Math.max(50, seconds * 1000));
  return Math.min(5_000, 250 * 2 ** (attempt - 1));
}

export function createApiClient(options: ApiClientOptions): ApiClient {
  const url = new URL(options.baseUrl);
  const prefix = url.pathname.replace(/\/+$/, "");
  const pool = new Pool(url.origin, { connections: options.connections ?? 8 });
  const maxAttempts = options.maxAttempts ?? 8;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const { token } = options;
  const bearer = typeof token === "string" ? () => Promise.resolve(token) : token;

  async function call<T>(method: "POST" | "PUT", path: string, body: unknown, ok: readonly number[]): Promise<{ status: number; json: T }> {
    const payload = JSON.stringify(body);
    for (let attempt = 1; ; attempt++) {
      let status: number;
      let text: string;
      let retryAfter: string | undefined;
      try {
        const res = await pool.request({
          method,
          path: `${prefix}${path}`,
          headers: { authorization: `Bearer ${await bearer()}`, "content-type": "application/json" },
          body: payload,
        });
        status = res.statusCode;
        text = await res.body.text();
        const header = res.headers["retry-after"];
        retryAfter = Array.isArray(header) ? header[0] : header;
      } catch (error) {
        const code = (error as { code?: string }).code;
        if (attempt < maxAttempts && code !== undefined && RETRY_ERRORS.has(code)) {
          await sleep(retryDelayMs(attempt, undefined));
          continue;
        }
        throw error;
      }
      if (ok.includes(status)) return { status, json: (text === "" ? undefined : JSON.parse(text)) as T };
      if (attempt < maxAttempts && RETRY_STATUSES.has(status)) {
        await sleep(retryDelayMs(attempt, retryAfter));
        continue;
      }
      throw new ApiError(status, `${method} ${path} answered ${status}: ${describe(text)}`);
    }
  }

  return {
    postTransactions: async (transactions) =>
      (await call<{ accepted: number; duplicates: number }>("POST", "/v1/ingest/transactions", { transactions }, [202])).json,
    postAccounts: async (accounts) => (await call<{ accepted: number }>("POST", "/v1/ingest/accounts", { accounts }, [202])).json,
    trackWallet: async (body) => {
      const { status, json } = await call<{ detail?: string } | undefined>("POST", "/v1/wallets", body, [201, 409]);
      // A 409 over MAX_WALLETS_PER_CALLER tracked nothing: counted as "exists", the run would feed wallets no one tracks.
      if (status === 409 && json?.detail?.includes("MAX_WALLETS_PER_CALLER")) throw new ApiError(status, `POST /v1/wallets answered 409: ${json.detail}`);
      return status === 201 ? "created" : "exists";
    },
    putLabels: async (labels) => (await call<{ upserted: number }>("PUT", "/v1/risk/labels", { labels }, [200])).json,
    close: () => pool.close(),
  };
}

/** The problem's detail when the body is problem+json, else the start of the body. */
function describe(text: string): string {
  try {
    const problem = JSON.parse(text) as { detail?: unknown };
    if (typeof problem.detail === "string") return problem.detail;
  } catch {
    // not JSON: fall through to the raw text
  }
  return text.slice(0, 200) || "(empty body)";
}
