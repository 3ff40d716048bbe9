import { SignJWT } from "jose";

export type TokenClaims = { sub: string; scope?: string; email?: string; phone?: string; ttlSeconds: number };

/** A development/test token signed with the HS256 secret the API verifies with. */
export async function mintToken(
  secret: string,
  claims: TokenClaims,
  jwt: { issuer?: string | undefined; audience?: string | undefined } = {},
): Promise<string> {
  let builder = new SignJWT({
    ...(claims.scope !== undefined ? { scope: claims.scope } : {}),
    ...(claims.email ? { email: claims.email } : {}),
    ...(claims.phone ? { phone_number: claims.phone } : {}),
  })
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setSubject(claims.sub)
    .setIssuedAt()
    .setExpirationTime(Math.floor(Date.now() / 1000) + claims.ttlSeconds);
  if (jwt.issuer) builder = builder.setIssuer(jwt.issuer);
  if (jwt.audience) builder = builder.setAudience(jwt.audience);
  return builder.sign(new TextEncoder().encode(secret));
}
