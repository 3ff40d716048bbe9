// The name servers a resolv.conf names, read as c-ares reads the file (c-ares is what node:dns's
// Resolver is, and what reads /etc/resolv.conf for it), for a Resolver given a resolv.conf of
// its own (resolve-host.ts). Pure: the caller reads the file.
import { isIP } from "node:net";

/**
 * The name servers of the `nameserver` lines, in file order, each once, in the form
 * Resolver.setServers takes: "192.0.2.1", "192.0.2.1:5353", "2001:db8::1", "[2001:db8::1]:5353".
 * As c-ares reads them: a line is trimmed; # or ; begins a comment (the rest of the line); one
 * line may name several servers, separated by spaces or commas; a server may carry a port
 * ("host:port", "[host]:port": c-ares's syntax, which glibc's resolver does not have); an IPv6
 * link-local address's "%interface" is dropped (setServers has no form for it, and drops it
 * itself). What is no IP address, or has a port outside 1-65535, is skipped. None: the file
 * names no name server, and the caller keeps c-ares's default.
 */
export function parseResolvConf(text: string): string[] {
  const servers: string[] = [];
  for (const line of text.split("\n")) {
    const [keyword, ...values] = line.replace(/[#;].*/, "").trim().split(/[\s,]+/);
    if (keyword !== "nameserver") continue;
    for (const value of values) {
      const server = nameServer(value);
      if (server !== undefined && !servers.includes(server)) servers.push(server);
    }
  }
  return servers;
}

/** "address", "address%interface", "ipv4:port", "[address]", "[address]:port", "[address]:port%interface". */
function nameServer(value: string): string | undefined {
  const bracketed = /^\[([^\]]+)\](?::(\d+))?(?:%.*)?$/.exec(value);
  const withPort = /^([^:]+):(\d+)$/.exec(value);
  const [address, port] = bracketed ? [bracketed[1]!, bracketed[2]] : withPort ? [withPort[1]!, withPort[2]] : [value, undefined];
  const bare = address.replace(/%.*$/, "");
  const family = isIP(bare);
  if (family === 0) return undefined;
  if (port === undefined) return bare;
  const number = Number(port);
  if (number < 1 || number > 65_535) return undefined;
  return family === 6 ? `[${bare}]:${number}` : `${bare}:${number}`;
}
