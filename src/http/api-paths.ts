// Which requests are for the /v1 API, and so need a bearer token. Decided by the route the
// router matched, never by the raw URL: the router decodes percent-encoding before it
// matches, so "/%761/risk/labels" reaches the /v1/risk/labels handler while the raw URL does
// not start with "/v1/". A request that matched no route (a 404 to be) or that the router
// refused (bad encoding, an over-long parameter) is judged by its path, decoded the same
// way, case ignored: a caller without a token learns nothing about /v1 either way.

/** A matched route's pattern ("/v1/wallets/:walletId") is part of the API. */
export const isApiRoute = (routePattern: string): boolean => API_PREFIX.test(routePattern);

/** A raw request URL that matched no route (or that the router refused) is under /v1. */
export function isApiPath(rawUrl: string): boolean {
  const path = rawUrl.replace(ABSOLUTE_FORM_ORIGIN, "").split("?", 1)[0] ?? "";
  return API_PREFIX_ANY_CASE.test(path) || API_PREFIX_ANY_CASE.test(decodeLeniently(path));
}

const API_PREFIX = /^\/v1(\/|$)/;
const API_PREFIX_ANY_CASE = /^\/+v1(\/|$)/i;
// A request target in absolute form (RFC 9112 section 3.2.2: "GET http://host/v1/x"), which
// a server must accept and the router matches by its path: judged by its path too.
const ABSOLUTE_FORM_ORIGIN = /^https?:\/\/[^/?#]*/i;

/** Decodes what decodes; a malformed escape (the reason the router refused it) stays as it is. */
function decodeLeniently(path: string): string {
  return path.replace(/(%[0-9a-f]{2})+/gi, (run) => {
    try {
      return decodeURIComponent(run);
    } catch {
      return run;
    }
  });
}
