// Server-side request forgery guard for webhook URLs (DESIGN.md section 6). A caller
// chooses where we POST, so without this an alert could make the service call its own
// admin ports, the cloud metadata endpoint or the office network. Only global unicast
// destinations pass; operators open holes with WEBHOOK_ALLOWED_CIDRS (tests and the demo
// open loopback). The address rules are pure; the delivery connector reuses them on every
// connection, because DNS can change between creation and delivery.
import ipaddr from "ipaddr.js";
import { createHostResolver } from "./resolve-host.ts";

type Address = ipaddr.IPv4 | ipaddr.IPv6;
type Cidr = [Address, number];

export const MAX_WEBHOOK_URL_LENGTH = 2048;
const LOOKUP_TIMEOUT_MS = 3_000;

// Ranges that ipaddr.js does not name precisely enough for the reason we give.
const NAMED_RANGES: ReadonlyArray<readonly [string, string]> = [
  ["192.0.2.0/24", "a documentation address"],
  ["198.51.100.0/24", "a documentation address"],
  ["203.0.113.0/24", "a documentation address"],
  ["2001:db8::/32", "a documentation address"],
  ["198.18.0.0/15", "a benchmarking address"],
  ["2001:2::/48", "a benchmarking address"],
  // IPv4-compatible IPv6 (deprecated): ipaddr.js calls it unicast, the kernel may route it to v4.
  ["::/96", "an IPv4-compatible IPv6 address"],
  // Local-use NAT64 (RFC 8215): translated by a gateway inside the operator's network.
  ["64:ff9b:1::/48", "a local-use NAT64 address"],
];
const NAMED = NAMED_RANGES.map(([cidr, kind]) => [ipaddr.parseCIDR(cidr), kind] as const);

const RANGE_KINDS: Record<string, string> = {
  unspecified: "an unspecified address",
  broadcast: "a broadcast address",
  multicast: "a multicast address",
  linkLocal: "a link-local address",
  loopback: "a loopback address",
  carrierGradeNat: "a carrier-grade NAT (shared) address",
  private: "a private address",
  uniqueLocal: "a private (unique local) address",
  deprecatedSiteLocal: "a private (site-local) address",
  teredo: "a Teredo tunnel address",
  benchmarking: "a benchmarking address",
};

/**
 * Why `ip` must not be called ("a private address", …), or undefined when it may be.
 * Text that is not an IP address is refused: the caller asked about something it could
 * not resolve itself.
 */
export function refusedAddressKind(ip: string, allowedCidrs: readonly string[]): string | undefined {
  let address: Address;
  try {
    address = ipaddr.parse(ip);
  } catch {
    return "not an IP address";
  }
  const embedded = embeddedIPv4(address);
  const allowed = parseCidrs(allowedCidrs);
  if (isInside(address, allowed) || (embedded !== undefined && isInside(embedded, allowed))) return undefined;
  if (embedded !== undefined) {
    const inner = kindOf(embedded);
    return inner === undefined ? undefined : `${embeddingName(address)} of ${inner}`;
  }
  return kindOf(address);
}

/** True when a connection to `ip` must be refused (see refusedAddressKind). */
export function isRefusedAddress(ip: string, allowedCidrs: readonly string[]): boolean {
  return refusedAddressKind(ip, allowedCidrs) !== undefined;
}

function kindOf(address: Address): string | undefined {
  const range = address.range();
  // ipaddr.js lumps documentation and benchmarking into "reserved" and calls ::/96
  // unicast; the named table tells them apart (after ::1 and :: have had their names).
  if (range === "unicast" || range === "reserved" || range === "rfc6052") {
    for (const [cidr, kind] of NAMED) {
      if (cidr[0].kind() === address.kind() && address.match(cidr)) return kind;
    }
  }
  if (range === "unicast") return undefined;
  return RANGE_KINDS[range] ?? "a reserved, special-purpose address";
}

/** The IPv4 address that an IPv6 form carries and that the packet finally reaches. */
function embeddedIPv4(address: Address): ipaddr.IPv4 | undefined {
  if (address.kind() !== "ipv6") return undefined;
  const v6 = address as ipaddr.IPv6;
  const parts = v6.parts;
  const fromWords = (high: number, low: number) =>
    new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
  switch (v6.range()) {
    case "ipv4Mapped": // ::ffff:a.b.c.d
    case "rfc6145": // ::ffff:0:a.b.c.d
      return fromWords(parts[6]!, parts[7]!);
    case "rfc6052": // 64:ff9b::a.b.c.d (the /48 local-use prefix is refused by NAMED above)
      return parts[2] === 0 ? fromWords(parts[6]!, parts[7]!) : undefined;
    case "6to4": // 2002:AABB:CCDD::/48
      return fromWords(parts[1]!, parts[2]!);
    default:
      return undefined;
  }
}

function embeddingName(address: Address): string {
  switch ((address as ipaddr.IPv6).range()) {
    case "6to4":
      return "a 6to4 form";
    case "rfc6052":
      return "a NAT64 form";
    default:
      return "an IPv4-mapped form";
  }
}

// WEBHOOK_ALLOWED_CIDRS is read once per process; parse it once too. An entry that is
// not a CIDR matches nothing, which errs on the side of refusing.
const parsedCidrs = new WeakMap<readonly string[], Cidr[]>();

function parseCidrs(cidrs: readonly string[]): Cidr[] {
  let parsed = parsedCidrs.get(cidrs);
  if (!parsed) {
    parsed = cidrs.flatMap((cidr) => (ipaddr.isValidCIDR(cidr) ? [ipaddr.parseCIDR(cidr)] : []));
    parsedCidrs.set(cidrs, parsed);
  }
  return parsed;
}

function isInside(address: Address, cidrs: Cidr[]): boolean {
  return cidrs.some((cidr) => cidr[0].kind() === address.kind() && address.match(cidr));
}

export type WebhookUrlOptions = {
  allowHttp: boolean;
  allowedCidrs: readonly string[];
  /** Every address a host name resolves to; createHostResolver (c-ares, off the threadpool) by default. */
  lookup?: (host: string) => Promise<string[]>;
};

export type WebhookUrlCheck = { ok: true; url: URL } | { ok: false; reason: string };

/** The creation-time rules for a webhookUrl; the reason is a sentence for the caller. */
export async function checkWebhookUrl(raw: string, options: WebhookUrlOptions): Promise<WebhookUrlCheck> {
  const refuse = (reason: string): WebhookUrlCheck => ({ ok: false, reason });
  if (raw.length > MAX_WEBHOOK_URL_LENGTH) {
    return refuse(`webhookUrl must be at most ${MAX_WEBHOOK_URL_LENGTH} characters`);
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return refuse("webhookUrl must be an absolute URL such as https://hooks.example.com/wallet-alerts");
  }
  if (url.protocol !== "https:" && !(url.protocol === "http:" && options.allowHttp)) {
    return refuse(options.allowHttp ? "webhookUrl must use https or http" : "webhookUrl must use https");
  }
  if (url.username !== "" || url.password !== "") {
    return refuse("webhookUrl must not contain a user name or password");
  }
  // Port 0 parses, but no connection can reach it: every delivery would fail until the alert is disabled.
  if (url.port === "0") return refuse("webhookUrl must not name port 0");

  // WHATWG URL parsing has already turned decimal, hex, octal and short IPv4 spellings
  // into dotted quads and IPv6 into its compressed form, so one parse covers them all.
  const host = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
  if (ipaddr.isValid(host)) {
    const kind = refusedAddressKind(host, options.allowedCidrs);
    return kind ? refuse(`webhookUrl points to ${host}, ${kind}`) : { ok: true, url };
  }

  const name = host.replace(/\.$/, "");
  if (!isDnsName(name)) return refuse(`webhookUrl host name is not one DNS can hold (at most ${MAX_DNS_NAME} characters, ${MAX_DNS_LABEL} per label)`);
  // RFC 6761: these names are loopback whatever DNS says, so judge them as 127.0.0.1 and ::1.
  const addresses =
    name === "localhost" || name.endsWith(".localhost")
      ? ["127.0.0.1", "::1"]
      : await resolve(name, options.lookup ?? lookupAll);
  if (addresses === LOOKUP_FAILED) return refuse(`webhookUrl host name ${name} could not be looked up`);
  // Which address, or which kind, is not said: any caller could otherwise map the service's
  // internal names (db.internal → 10.0.3.7) by trying them.
  if (addresses.some((address) => refusedAddressKind(address, options.allowedCidrs))) {
    return refuse(`webhookUrl host name ${name} resolves to ${NON_PUBLIC}`);
  }
  return { ok: true, url };
}

/** What a caller is told of a name that resolves to a refused address (see safe-dispatcher.ts too). */
export const NON_PUBLIC = "an address that webhooks may not reach (a private, loopback, link-local or other non-public range)";

const MAX_DNS_NAME = 253;
const MAX_DNS_LABEL = 63;
const isDnsName = (name: string) => name.length <= MAX_DNS_NAME && name.split(".").every((label) => label.length <= MAX_DNS_LABEL);

// Answers that mean "no address yet": a name that is registered later is fine, because
// every delivery checks the addresses again.
// The name servers failing or refusing (c-ares's ECONNREFUSED, EREFUSED, EBADRESP, EOF, …) is
// the same "not now": getaddrinfo said EAI_AGAIN for all of them.
const UNRESOLVED_CODES = new Set([
  "ENOTFOUND",
  "ENODATA",
  "EAI_AGAIN",
  "EAI_NONAME",
  "ESERVFAIL",
  "ETIMEOUT",
  "EREFUSED",
  "ECONNREFUSED",
  "EBADRESP",
  "ECANCELLED",
  "EOF",
]);

const LOOKUP_FAILED = Symbol("lookup failed");

/** The name's addresses; none when it does not resolve yet; LOOKUP_FAILED when the resolver refused the name itself. */
async function resolve(name: string, lookup: (host: string) => Promise<string[]>): Promise<string[] | typeof LOOKUP_FAILED> {
  try {
    return await lookup(name);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (typeof code === "string" && UNRESOLVED_CODES.has(code)) return [];
    return LOOKUP_FAILED;
  }
}

/** Off the libuv threadpool, as at delivery (resolve-host.ts): a name server that never answers holds no thread of the API's. */
const lookupAll = createHostResolver({ deadlineMs: LOOKUP_TIMEOUT_MS });
