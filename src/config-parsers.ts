// How each setting is read: parsers from the raw string of one environment variable to its
// value, each throwing an Error whose message says what was expected (loadConfig names the
// variable). Pure.
import { isIP } from "node:net";
import ipaddr from "ipaddr.js";
import addressparser from "nodemailer/lib/addressparser";
import { isPhoneCountry } from "./domain/sms-number.ts";
import { parseDuration } from "./duration.ts";

export function urlWithScheme(schemes: string[]) {
  return (raw: string): string => {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw new Error(`expected a URL (${schemes.join(" or ")}//…)`);
    }
    if (!schemes.includes(url.protocol)) throw new Error(`expected a ${schemes.join(" or ")} URL`);
    const badEscape = badPercentEncoding(url);
    if (badEscape) throw new Error(badEscape);
    return raw;
  };
}

/** The parts of a URL that its clients decode, and what an operator calls them. */
const DECODED_PARTS = [
  ["username", "user name"],
  ["password", "password"],
  ["hostname", "host"],
  ["pathname", "path"],
  ["search", "query"],
  ["hash", "fragment"],
] as const;

/**
 * A `%` that does not start a valid percent-escape, said without the part itself (it may be the
 * password). The WHATWG parser keeps such a `%` as it is, but postgres.js and ioredis decode the
 * user name and password (postgres.js the host too) with decodeURIComponent when they connect:
 * a generated password with a `%` in it crashed the process there with `URIError: URI malformed`
 * and a stack trace that named no setting.
 */
export function badPercentEncoding(url: URL): string | undefined {
  for (const [part, name] of DECODED_PARTS) {
    const value = url[part];
    if (!value.includes("%")) continue;
    try {
      decodeURIComponent(value);
    } catch {
      const what = /%(?![0-9a-fA-F]{2})/.test(value) ? "a % not followed by two hex digits" : "%-escapes that are not UTF-8";
      return `the ${name} has ${what}: percent-encode it (a % is written %25)`;
    }
  }
  return undefined;
}

/** What stands for a transaction's signature in EXPLORER_TX_URL. */
export const SIGNATURE_PLACEHOLDER = "{signature}";
/** What stands for an account's address in EXPLORER_ADDRESS_URL. */
export const ADDRESS_PLACEHOLDER = "{address}";

/**
 * EXPLORER_TX_URL: an https (or http) URL with `{signature}` where a transaction's signature
 * goes, and no other braces (`{sig}`, `{tx}` would be sent as typed, a link to nothing). Checked
 * with a signature put in, as the email will have it; no user or password (it is in every email).
 */
export const explorerTxUrl = explorerTemplate({
  placeholder: SIGNATURE_PLACEHOLDER,
  what: "the transaction's signature",
  sample: "5h6xBEauJ3PK6SWCZ1PGjBvj8vDdWG3KpwATGy1ARAXFSDwt8GFXM7W5Ncn16wmqokgpiKRLuS83KUxyZyv2sUYv",
  example: "https://solscan.io/tx/{signature}",
});

/** EXPLORER_ADDRESS_URL: an account's page, `{address}` where its address goes; checked as EXPLORER_TX_URL is. */
export const explorerAddressUrl = explorerTemplate({
  placeholder: ADDRESS_PLACEHOLDER,
  what: "the account's address",
  sample: "7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU",
  example: "https://solscan.io/account/{address}",
});

/** A block explorer's page template: its one placeholder, then a URL that can go in every alert email. */
function explorerTemplate(template: { placeholder: string; what: string; sample: string; example: string }): (raw: string) => string {
  const { placeholder, what, sample } = template;
  const example = `such as ${template.example}`;
  return (raw) => {
    if (!raw.includes(placeholder)) throw new Error(`expected a URL with ${placeholder} where ${what} goes, ${example}`);
    if (/[{}]/.test(raw.replaceAll(placeholder, ""))) throw new Error(`expected no placeholder but ${placeholder}, ${example}`);
    let url: URL;
    try {
      url = new URL(raw.replaceAll(placeholder, sample));
    } catch {
      throw new Error(`expected a URL, ${example}`);
    }
    if (url.protocol !== "https:" && url.protocol !== "http:") throw new Error(`expected an https or http URL, ${example}`);
    if (url.username || url.password) throw new Error("expected a URL without a user or password: it is in every alert email");
    const badEscape = badPercentEncoding(url);
    if (badEscape) throw new Error(badEscape);
    return raw;
  };
}

/**
 * REDIS_URL: a redis: or rediss: URL whose path, if any, is a database number (ioredis reads
 * `/<n>`, or `?db=<n>` without one, and sends SELECT <n>). Anything else became `SELECT NaN`,
 * which Redis refuses, and the process crashed with a ReplyError. A number the server does not
 * have is found at connect (src/redis.ts): the parser cannot know the server's `databases`.
 */
export function redisUrl(raw: string): string {
  urlWithScheme(["redis:", "rediss:"])(raw);
  const url = new URL(raw);
  if (url.pathname !== "" && !/^\/\d*$/.test(url.pathname))
    throw new Error("expected a database number as the path, such as redis://127.0.0.1:6379/0 (no path: database 0)");
  const db = url.searchParams.get("db");
  if (db !== null && !/^\d+$/.test(db)) throw new Error("expected a database number in ?db=, such as ?db=0");
  return raw;
}

/**
 * Twilio posts each status (and a signature over this exact URL) here, so it must be public and
 * secret-free: https (plain http only where webhooks may use it, WEBHOOK_ALLOW_HTTP), no
 * credentials (the signature is the authentication), no fragment (Twilio's #-options change how
 * it calls, and what it signs is not documented for them).
 */
export function statusCallbackUrl(allowHttp: boolean) {
  const schemes = allowHttp ? ["https:", "http:"] : ["https:"];
  return (raw: string): string => {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw new Error("expected the public https URL of POST /v1/callbacks/twilio/sms-status, such as https://alerts.example.com/v1/callbacks/twilio/sms-status");
    }
    if (!schemes.includes(url.protocol)) {
      throw new Error(
        allowHttp
          ? "expected an https or http URL"
          : "expected an https URL (Twilio would send each status in the clear; plain http only with WEBHOOK_ALLOW_HTTP=true)",
      );
    }
    if (url.username || url.password) throw new Error("expected a URL without a user or password (Twilio's signature authenticates the callbacks)");
    const badEscape = badPercentEncoding(url);
    if (badEscape) throw new Error(badEscape);
    if (raw.includes("#")) throw new Error("expected a URL without a #fragment");
    return raw;
  };
}

export function integerIn(min: number, max: number) {
  return (raw: string): number => {
    if (!/^\d+$/.test(raw)) throw new Error(`expected a whole number from ${min} to ${max}`);
    const value = Number(raw);
    if (value < min || value > max) throw new Error(`expected a whole number from ${min} to ${max}`);
    return value;
  };
}

export function durationBetween(minMs: number, maxMs: number) {
  const bounds = `from ${formatMs(minMs)} to ${formatMs(maxMs)}`;
  return (raw: string): number => {
    const ms = parseDuration(raw);
    if (ms < minMs || ms > maxMs) throw new Error(`expected a duration ${bounds}, such as 10s`);
    return ms;
  };
}

const formatMs = (ms: number): string =>
  ms === 0
    ? "0s"
    : ms % 3_600_000 === 0 ? `${ms / 3_600_000}h` : ms % 60_000 === 0 ? `${ms / 60_000}m` : ms % 1_000 === 0 ? `${ms / 1_000}s` : `${ms}ms`;

export function minLength(length: number) {
  return (raw: string): string => {
    if (raw.length < length) throw new Error(`expected at least ${length} characters`);
    return raw;
  };
}

/**
 * A value an HTTP header must carry as it is configured: Node strips the whitespace around a
 * header's value and reads its bytes as Latin-1, so a value with spaces or a line break at either
 * end (a secrets file's last newline), a control character or a character outside printable
 * ASCII could never match what arrives, and every request would be refused without a word.
 * The ends are trimmed; the rest is refused.
 */
export function headerValue(length: number) {
  const atLeast = minLength(length);
  return (raw: string): string => {
    const value = atLeast(raw.trim());
    if (!/^[\x20-\x7e]+$/.test(value)) {
      throw new Error("expected printable ASCII only (no control characters, no characters outside ASCII): an HTTP header cannot carry them as they are");
    }
    return value;
  };
}

/**
 * A secret or name read from a secrets file, which usually ends in a newline (`kubectl create
 * secret --from-file`, `echo … >`): no browser, scraper or token minter sends it, so a value kept
 * with it refused every login and every token with a bare 401. The ends are trimmed, as for
 * HELIUS_AUTH_HEADER, before `parse` checks the rest; nothing but white space is refused.
 */
export function trimmedEnds<T>(parse: (raw: string) => T) {
  return (raw: string): T => {
    const value = raw.trim();
    if (value === "") throw new Error("expected a value, not only white space (unset it instead)");
    return parse(value);
  };
}

/**
 * A port to listen on (WORKER_METRICS_PORT). Kubernetes injects `<SERVICE>_PORT=tcp://<ip>:<port>`
 * into every pod of a namespace that has a Service of that name (service links): a Service named
 * `worker-metrics` sets WORKER_METRICS_PORT to such a URL, which no one meant as this setting.
 */
export function listenPort(raw: string): number {
  if (/^(tcp|udp|sctp):\/\//.test(raw)) {
    throw new Error(
      `${raw} looks like a Kubernetes service link (injected for a Service named worker-metrics), not a port: ` +
        "set enableServiceLinks: false in the pod spec or name the Service otherwise, and give the port as a number such as 9464",
    );
  }
  return integerIn(0, 65535)(raw);
}

export function matching(pattern: RegExp, description: string) {
  return (raw: string): string => {
    if (!pattern.test(raw)) throw new Error(`expected ${description}`);
    return raw;
  };
}

export function oneOf(values: string[]) {
  return (raw: string): string => {
    if (!values.includes(raw)) throw new Error(`expected one of ${values.join(", ")}`);
    return raw;
  };
}

export function boolean(raw: string): boolean {
  if (raw === "true") return true;
  if (raw === "false") return false;
  throw new Error("expected true or false");
}

export function commaList<T>(parse: (item: string) => T) {
  return (raw: string): T[] =>
    raw
      .split(",")
      .map((item) => item.trim())
      .filter((item) => item !== "")
      .map(parse);
}

/**
 * SMS_ALLOWED_COUNTRIES: ISO 3166-1 alpha-2 codes, as libphonenumber names a number's country
 * (GB, not UK; a Guernsey mobile is GG and a Canadian number CA, though they share +44 and +1).
 * A code it does not know would match no number, so a typo would refuse a country the operator
 * meant to allow, without a word: refused at start. Upper-cased; repeats dropped.
 */
export function countryCodes(raw: string): string[] {
  const codes = [...new Set(commaList((code) => code.toUpperCase())(raw))];
  if (codes.length === 0) throw new Error("expected a comma list of ISO 3166 alpha-2 country codes, such as US,CA (unset: every country)");
  const unknown = codes.filter((code) => !isPhoneCountry(code));
  if (unknown.length > 0) {
    const hint = unknown.includes("UK") ? " (the United Kingdom is GB)" : "";
    throw new Error(`expected ISO 3166 alpha-2 country codes such as US,CA: ${unknown.join(", ")} ${unknown.length === 1 ? "is not one" : "are not"}${hint}`);
  }
  return codes;
}

/**
 * QUEUE_PREFIX: every key of ours starts with it. Blank or with white space, it was taken as
 * given: keys no one would type into redis-cli, and a prefix of spaces differs from another of
 * spaces only invisibly, so two deployments could share one without anyone seeing it.
 */
export function queuePrefix(raw: string): string {
  if (raw.trim() === "" || /\s/.test(raw)) throw new Error("expected a key prefix without spaces, such as {wallet-alerts}");
  return raw;
}

export function workerQueues(raw: string): string[] | "all" {
  if (raw.trim() === "all") return "all";
  const names = commaList((name) => name)(raw);
  // A worker that serves no queue would start, log "worker started" and never do anything.
  if (names.length === 0) throw new Error("expected all or a comma list of queue names");
  return names;
}

export function oneMailbox(raw: string): string {
  // Parsed as nodemailer will parse it: without an address it sends MAIL FROM:<> and no
  // From header, which relays may take (250) and recipients' servers drop.
  const parsed = addressparser(raw, { flatten: true });
  if (parsed.length !== 1 || !/^[^\s@]+@[^\s@]+$/.test(parsed[0]!.address)) {
    throw new Error("expected one address, such as alerts@example.com or wallet-alerts <alerts@example.com>");
  }
  return raw;
}

export function cidr(raw: string): string {
  // The SSRF guard skips ranges that do not parse, so a typo here would close a range silently.
  if (!ipaddr.isValidCIDR(raw)) throw new Error(`"${raw}" is not a CIDR range such as 127.0.0.0/8`);
  return raw;
}

/**
 * A URL's hostname that can only mean this machine: localhost, 127.0.0.0/8, ::1. Not the other
 * names under .localhost: RFC 6761 reserves them, but glibc's resolver asks DNS for them.
 */
export function isLoopbackHost(hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/\.$/, "");
  return name === "localhost" || name === "[::1]" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(name);
}

/**
 * The address a server listens on (HOST): an IP address of this machine (0.0.0.0 or :: for every
 * interface), or localhost. Not another host name: a listen address names an interface, and a
 * name resolves to whichever address DNS gives at start (or to none: the process died at its
 * listen with a stack trace). An address that no interface has is refused by the listen itself.
 */
export function listenHost(raw: string): string {
  if (raw === "localhost" || isIP(raw) !== 0) return raw;
  const hint = /^\[.*\]$/.test(raw) ? " (an IPv6 address without its brackets)" : "";
  throw new Error(`expected an IP address to listen on, such as 0.0.0.0 (every IPv4 interface), :: (every interface) or 127.0.0.1, or localhost${hint}`);
}

/**
 * HTTP Basic sends `user:password` and is split at the first colon: a user name with a colon
 * could never log in (its rest would be taken as the start of the password).
 */
export function basicAuthUser(raw: string): string {
  if (raw.includes(":")) throw new Error("expected a user name without a colon (HTTP Basic splits user and password at the first one, so this user could never log in)");
  return raw;
}
