// Why a server could not listen on its configured address, for the one fatal line a process
// ends with (src/bin/exit-on-listen-failure.ts). Pure.

/**
 * Why a server could not listen on its configured address, naming the setting to change (a PORT,
 * or HOST) and the system's code, for the one fatal line a process ends with: `PORT 3000: address
 * already in use (EADDRINUSE): another process listens there`.
 */
export function listenFailure(
  error: unknown,
  where: { portSetting: "PORT" | "WORKER_METRICS_PORT"; port: number; host: string },
): { setting: string; code: string | undefined; message: string } {
  const code = (error as { code?: unknown } | undefined)?.code;
  const known = typeof code === "string" ? LISTEN_FAILURES[code] : undefined;
  if (!known) {
    const what = error instanceof Error ? error.message : String(error);
    return {
      setting: where.portSetting,
      code: typeof code === "string" ? code : undefined,
      message: `${where.portSetting} ${where.port} on HOST ${where.host}: cannot listen: ${what}`,
    };
  }
  const [setting, value] = known.on === "port" ? [where.portSetting, where.port] : ["HOST", where.host];
  return { setting, code: code as string, message: `${setting} ${value}: ${known.what} (${code as string}): ${known.why}` };
}

const LISTEN_FAILURES: Readonly<Record<string, { on: "port" | "host"; what: string; why: string }>> = {
  EADDRINUSE: { on: "port", what: "address already in use", why: "another process listens there" },
  EACCES: { on: "port", what: "permission denied", why: "a port below 1024 needs privileges (root, or CAP_NET_BIND_SERVICE): choose one from 1024" },
  EADDRNOTAVAIL: { on: "host", what: "address not available", why: "no network interface of this machine has that address" },
  EAFNOSUPPORT: { on: "host", what: "address family not supported", why: "this machine has no network of that family (IPv6 switched off?)" },
  ENOTFOUND: { on: "host", what: "name not found", why: "it does not resolve to an address of this machine" },
  EAI_AGAIN: { on: "host", what: "name not resolved", why: "the resolver did not answer" },
};
