// The attempt log is the alert owner's to read (GET /v1/notifications/{id}), but a transport
// error of the email or SMS channel names the operator's own peer: "connect ECONNREFUSED
// 10.0.3.7:587", "getaddrinfo ENOTFOUND smtp.internal". The owner learns nothing useful from
// that address and the operator's network layout should not be shown to every caller; the
// error code stays, and the operator has the address already (SMTP_URL, TWILIO_BASE_URL).

const SYSCALL_WITH_PEER = /\b(connect|getaddrinfo|read|write|querySrv|queryA|queryAaaa)\s+(E[A-Z_]+)\s+\S+/g;
const IPV4_WITH_PORT = /\b\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?\b/g;
const BRACKETED_IPV6 = /\[[0-9a-fA-F:.]+\](?::\d+)?/g;

/** `message` without the peer's host or address (the syscall and error code are kept). */
export function withoutPeerAddress(message: string): string {
  return message.replace(SYSCALL_WITH_PEER, "$1 $2").replace(BRACKETED_IPV6, "[address]").replace(IPV4_WITH_PORT, "[address]");
}
