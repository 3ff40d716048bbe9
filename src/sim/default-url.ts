// Where `npm run simulate` posts when --url is not given: the API that the same shell's PORT and
// HOST start (`npm run start:api`), not always 127.0.0.1:3000. A simulator run beside an API on
// PORT=41200 posted to 3000 and failed with ECONNREFUSED. Pure.
import { isIP } from "node:net";
import { integerIn, listenHost } from "../config-parsers.ts";

/** An address that listens on every interface is reached on loopback. */
const EVERY_INTERFACE = new Set(["0.0.0.0", "::"]);

export function defaultApiUrl(env: { PORT?: string | undefined; HOST?: string | undefined }): string {
  const port = env.PORT ? parsed("PORT", env.PORT, integerIn(1, 65535)) : 3000;
  const host = env.HOST ? parsed("HOST", env.HOST, listenHost) : "0.0.0.0";
  const reached = EVERY_INTERFACE.has(host) ? "127.0.0.1" : host;
  return `http://${isIP(reached) === 6 ? `[${reached}]` : reached}:${port}`;
}

function parsed<T>(name: string, raw: string, parse: (raw: string) => T): T {
  try {
    return parse(raw);
  } catch (error) {
    throw new Error(`${name} (which --url defaults to) is not valid: ${(error as Error).message}; give --url`, { cause: error });
  }
}
