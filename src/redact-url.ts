// A connection URL as it may be shown (logs, /readyz, a command's output): the password
// replaced, the rest kept so that an operator sees which host, user and database are meant.
export function redactUrl(raw: string): string {
  try {
    const url = new URL(raw);
    if (url.password) url.password = "***";
    // ioredis (and libpq-style URLs) also take a password as a query parameter.
    for (const name of [...url.searchParams.keys()]) {
      if (/^(password|pass|pwd)$/i.test(name)) url.searchParams.set(name, "***");
    }
    return url.toString();
  } catch {
    // Not a URL the WHATWG parser takes: show nothing of it rather than risk the password.
    return "(the URL cannot be parsed)";
  }
}
