import { describe, expect, it } from "vitest";
import { isApiPath, isApiRoute } from "../../src/http/api-paths.ts";

describe("isApiRoute (the pattern of the route the router matched)", () => {
  it.each([
    ["/v1/wallets", true],
    ["/v1/wallets/:walletId", true],
    ["/v1", true],
    ["/v10/wallets", false],
    ["/healthz", false],
    ["/admin/queues", false],
    ["/docs/static/*", false],
  ])("%s → %s", (pattern, expected) => expect(isApiRoute(pattern)).toBe(expected));
});

describe("isApiPath (a raw URL that matched no route, or that the router refused)", () => {
  it.each([
    ["/v1/no-such-route", true],
    ["/v1/wallets/%zz", true],
    ["/%761/wallets", true],
    ["/%76%31/risk/labels", true],
    ["/V1/wallets", true],
    ["//v1/wallets", true],
    ["/v1?x=1", true],
    ["/%7", false],
    ["/v10/wallets", false],
    ["/favicon.ico", false],
    ["/healthz?v1/", false],
    // Absolute form ("GET http://host/v1/x HTTP/1.1"), which the router matches by its path.
    ["http://evil/v1/nope", true],
    ["HTTPS://api.example:8443/V1/wallets?x=1", true],
    ["http://evil/%761/nope", true],
    ["http://evil?/v1/nope", false],
    ["http://evil/healthz", false],
    ["http://v1/", false],
  ])("%s → %s", (url, expected) => expect(isApiPath(url)).toBe(expected));
});
