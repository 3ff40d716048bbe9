// npm run token -- --sub alice --scope "wallets:read alerts:write" [--email a@x.io] [--phone +15551234567] [--ttl 12h]
// Mints a development token signed with JWT_SECRET; the token is the last line of stdout.
import { parseArgs } from "node:util";
import { loadJwtConfig } from "../config.ts";
import { SCOPES } from "../http/auth.ts";
import { mintToken } from "../http/mint-token.ts";
import { parseDuration } from "../duration.ts";

try {
  const { values } = parseArgs({
    options: {
      sub: { type: "string" },
      scope: { type: "string", default: SCOPES.filter((s) => s !== "admin").join(" ") },
      email: { type: "string" },
      phone: { type: "string" },
      ttl: { type: "string", default: "12h" },
    },
  });
  if (!values.sub) throw new Error("--sub is required (the caller the token speaks for)");
  const jwt = loadJwtConfig();
  if (!jwt.secret) throw new Error("JWT_SECRET is required to mint a token");
  const ttlSeconds = parseDuration(values.ttl) / 1000;
  console.log(await mintToken(jwt.secret, { ...values, sub: values.sub, ttlSeconds }, jwt));
} catch (error) {
  console.error((error as Error).message);
  process.exit(1);
}
