import { describe, expect, it } from "vitest";
import { NON_PUBLIC, checkWebhookUrl, isRefusedAddress, refusedAddressKind } from "../../src/notify/ssrf.ts";

const NONE: string[] = [];

describe("isRefusedAddress", () => {
  it.each([
    ["10.0.0.1", "a private address"],
    ["172.16.5.4", "a private address"],
    ["172.31.255.255", "a private address"],
    ["192.168.1.1", "a private address"],
    ["fc00::1", "a private (unique local) address"],
    ["fd12:3456::1", "a private (unique local) address"],
    ["127.0.0.1", "a loopback address"],
    ["127.255.0.9", "a loopback address"],
    ["::1", "a loopback address"],
    ["169.254.169.254", "a link-local address"],
    ["fe80::1", "a link-local address"],
    ["100.64.0.1", "a carrier-grade NAT (shared) address"],
    ["100.127.255.254", "a carrier-grade NAT (shared) address"],
    ["224.0.0.1", "a multicast address"],
    ["239.255.255.250", "a multicast address"],
    ["ff02::1", "a multicast address"],
    ["192.0.2.10", "a documentation address"],
    ["198.51.100.7", "a documentation address"],
    ["203.0.113.99", "a documentation address"],
    ["2001:db8::5", "a documentation address"],
    ["0.0.0.0", "an unspecified address"],
    ["0.1.2.3", "an unspecified address"],
    ["::", "an unspecified address"],
    ["255.255.255.255", "a broadcast address"],
    ["198.18.0.1", "a benchmarking address"],
    ["198.19.255.1", "a benchmarking address"],
    ["240.0.0.1", "a reserved, special-purpose address"],
    ["::7f00:1", "an IPv4-compatible IPv6 address"],
    ["64:ff9b:1::a00:1", "a local-use NAT64 address"],
    ["2001::1", "a Teredo tunnel address"],
  ])("refuses %s as %s", (ip, kind) => {
    expect(isRefusedAddress(ip, NONE)).toBe(true);
    expect(refusedAddressKind(ip, NONE)).toBe(kind);
  });

  it.each([
    ["::ffff:127.0.0.1", "an IPv4-mapped form of a loopback address"],
    ["::ffff:a00:1", "an IPv4-mapped form of a private address"],
    ["::ffff:0:a9fe:a9fe", "an IPv4-mapped form of a link-local address"],
    ["64:ff9b::10.1.2.3", "a NAT64 form of a private address"],
    ["64:ff9b::7f00:1", "a NAT64 form of a loopback address"],
    ["2002:c0a8:101::1", "a 6to4 form of a private address"],
    ["2002:7f00:1::", "a 6to4 form of a loopback address"],
  ])("refuses the IPv6 form %s of a refused IPv4 address", (ip, kind) => {
    expect(refusedAddressKind(ip, NONE)).toBe(kind);
  });

  it.each(["8.8.8.8", "1.1.1.1", "172.32.0.1", "100.128.0.1", "2606:4700:4700::1111", "::ffff:8.8.8.8", "64:ff9b::808:808", "2002:808:808::1"])(
    "allows the public address %s",
    (ip) => {
      expect(isRefusedAddress(ip, NONE)).toBe(false);
    },
  );

  it("allows a refused address inside an allowed CIDR and nothing outside it", () => {
    const allowed = ["127.0.0.0/8", "::1/128", "10.1.0.0/16"];
    expect(isRefusedAddress("127.0.0.1", allowed)).toBe(false);
    expect(isRefusedAddress("::1", allowed)).toBe(false);
    expect(isRefusedAddress("10.1.2.3", allowed)).toBe(false);
    expect(isRefusedAddress("10.2.0.1", allowed)).toBe(true);
    expect(isRefusedAddress("192.168.0.1", allowed)).toBe(true);
  });

  it("treats an allowed IPv4 range as allowing its IPv4-mapped form", () => {
    expect(isRefusedAddress("::ffff:127.0.0.1", ["127.0.0.0/8"])).toBe(false);
    expect(isRefusedAddress("::ffff:127.0.0.1", [])).toBe(true);
  });

  it("ignores an allowed entry that is not a CIDR instead of allowing everything", () => {
    expect(isRefusedAddress("10.0.0.1", ["not-a-cidr", "10.0.0.0/40"])).toBe(true);
  });

  it("refuses text that is not an IP address", () => {
    expect(isRefusedAddress("example.com", NONE)).toBe(true);
    expect(isRefusedAddress("", NONE)).toBe(true);
  });
});

const strict = { allowHttp: false, allowedCidrs: NONE };
const lookupTo =
  (addresses: string[]) =>
  async (_host: string): Promise<string[]> =>
    addresses;

describe("checkWebhookUrl", () => {
  it("accepts an https URL whose host resolves to public addresses and returns the parsed URL", async () => {
    const result = await checkWebhookUrl("https://hooks.example.com/alerts?x=1", {
      ...strict,
      lookup: lookupTo(["93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"]),
    });
    expect(result).toEqual({ ok: true, url: new URL("https://hooks.example.com/alerts?x=1") });
  });

  it("refuses plain http unless http is allowed", async () => {
    const url = "http://hooks.example.com/alerts";
    expect(await checkWebhookUrl(url, { ...strict, lookup: lookupTo(["93.184.216.34"]) })).toEqual({
      ok: false,
      reason: "webhookUrl must use https",
    });
    const allowed = await checkWebhookUrl(url, { ...strict, allowHttp: true, lookup: lookupTo(["93.184.216.34"]) });
    expect(allowed.ok).toBe(true);
  });

  it.each(["ftp://hooks.example.com/x", "file:///etc/passwd", "javascript:alert(1)", "gopher://hooks.example.com/"])(
    "refuses the scheme of %s",
    async (url) => {
      expect(await checkWebhookUrl(url, { ...strict, allowHttp: true })).toEqual({
        ok: false,
        reason: "webhookUrl must use https or http",
      });
    },
  );

  it.each(["hooks.example.com/alerts", "/alerts", "https://", "not a url"])("refuses %s as not an absolute URL", async (url) => {
    const result = await checkWebhookUrl(url, strict);
    expect(result).toEqual({ ok: false, reason: expect.stringContaining("must be an absolute URL") });
  });

  it("refuses a URL longer than 2048 characters and accepts one of exactly 2048", async () => {
    const base = "https://hooks.example.com/";
    const exact = base + "a".repeat(2048 - base.length);
    const options = { ...strict, lookup: lookupTo(["93.184.216.34"]) };
    expect((await checkWebhookUrl(exact, options)).ok).toBe(true);
    expect(await checkWebhookUrl(`${exact}a`, options)).toEqual({
      ok: false,
      reason: "webhookUrl must be at most 2048 characters",
    });
  });

  it.each(["https://hooks.example.com:0/alerts", "https://93.184.216.34:0/"])("refuses %s: no connection can reach port 0", async (url) => {
    expect(await checkWebhookUrl(url, { ...strict, lookup: lookupTo(["93.184.216.34"]) })).toEqual({
      ok: false,
      reason: "webhookUrl must not name port 0",
    });
  });

  it.each(["https://user:pass@hooks.example.com/", "https://user@hooks.example.com/", "https://:pass@hooks.example.com/"])(
    "refuses credentials in %s",
    async (url) => {
      expect(await checkWebhookUrl(url, { ...strict, lookup: lookupTo(["93.184.216.34"]) })).toEqual({
        ok: false,
        reason: "webhookUrl must not contain a user name or password",
      });
    },
  );

  it.each([
    ["https://127.0.0.1/", "127.0.0.1, a loopback address"],
    ["https://2130706433/", "127.0.0.1, a loopback address"],
    ["https://0x7f000001/", "127.0.0.1, a loopback address"],
    ["https://0177.0.0.1/", "127.0.0.1, a loopback address"],
    ["https://0x7f.1/", "127.0.0.1, a loopback address"],
    ["https://127.1/", "127.0.0.1, a loopback address"],
    ["https://017700000001/", "127.0.0.1, a loopback address"],
    ["https://167772161/", "10.0.0.1, a private address"],
    ["https://0xa9.0xfe.0xa9.0xfe/latest/meta-data", "169.254.169.254, a link-local address"],
    ["https://0/", "0.0.0.0, an unspecified address"],
    ["https://[::1]/", "::1, a loopback address"],
    ["https://[0:0:0:0:0:0:0:1]/", "::1, a loopback address"],
    ["https://[::]/", "::, an unspecified address"],
    ["https://[::ffff:127.0.0.1]/", "::ffff:7f00:1, an IPv4-mapped form of a loopback address"],
    ["https://[::ffff:a00:1]:8443/", "::ffff:a00:1, an IPv4-mapped form of a private address"],
    ["https://[fe80::1]/", "fe80::1, a link-local address"],
    ["https://[fd00::1]/", "fd00::1, a private (unique local) address"],
    ["https://[64:ff9b::a00:1]/", "64:ff9b::a00:1, a NAT64 form of a private address"],
    ["https://192.168.0.1:8080/hook", "192.168.0.1, a private address"],
  ])("refuses the literal address in %s", async (url, says) => {
    expect(await checkWebhookUrl(url, strict)).toEqual({ ok: false, reason: `webhookUrl points to ${says}` });
  });

  it("accepts a public literal address without a lookup", async () => {
    const lookup = async (): Promise<string[]> => {
      throw new Error("a literal address needs no lookup");
    };
    expect((await checkWebhookUrl("https://93.184.216.34/hook", { ...strict, lookup })).ok).toBe(true);
    expect((await checkWebhookUrl("https://[2606:4700::1111]/hook", { ...strict, lookup })).ok).toBe(true);
  });

  it.each(["https://localhost/", "https://LOCALHOST:8080/", "https://localhost./", "https://api.localhost/", "https://a.b.localhost/"])(
    "refuses the loopback name in %s",
    async (url) => {
      const result = await checkWebhookUrl(url, strict);
      expect(result).toEqual({ ok: false, reason: expect.stringMatching(/^webhookUrl host name \S*localhost resolves to an address that webhooks may not reach/) });
    },
  );

  it("accepts localhost when loopback is allowed, as tests and the demo configure", async () => {
    const result = await checkWebhookUrl("http://localhost:9000/", {
      allowHttp: true,
      allowedCidrs: ["127.0.0.0/8", "::1/128"],
    });
    expect(result.ok).toBe(true);
  });

  it("refuses a name when any one of its addresses is refused, without saying which address (no map of internal names)", async () => {
    const result = await checkWebhookUrl("https://hooks.example.com/", {
      ...strict,
      lookup: lookupTo(["93.184.216.34", "10.0.0.1"]),
    });
    expect(result).toEqual({ ok: false, reason: `webhookUrl host name hooks.example.com resolves to ${NON_PUBLIC}` });
    expect(JSON.stringify(result)).not.toContain("10.0.0.1");
  });

  it("refuses, without a lookup, a host name longer than DNS allows (253 characters, 63 per label)", async () => {
    const lookup = async (): Promise<string[]> => {
      throw new Error("no lookup for a name DNS cannot hold");
    };
    const label = (c: string) => c.repeat(63);
    for (const host of [`${label("a")}.${label("b")}.${label("c")}.${label("d")}.e`, `${"x".repeat(64)}.example.com`]) {
      expect(await checkWebhookUrl(`https://${host}/`, { ...strict, lookup })).toEqual({
        ok: false,
        reason: "webhookUrl host name is not one DNS can hold (at most 253 characters, 63 per label)",
      });
    }
    expect((await checkWebhookUrl(`https://${label("a")}.example.com/`, { ...strict, lookup: lookupTo(["93.184.216.34"]) })).ok).toBe(true);
  });

  it("refuses a name the resolver rejects outright (EINVAL) instead of failing the request", async () => {
    const lookup = async (): Promise<string[]> => {
      throw Object.assign(new Error("getaddrinfo EINVAL"), { code: "EINVAL" });
    };
    expect(await checkWebhookUrl("https://odd.example.com/", { ...strict, lookup })).toEqual({
      ok: false,
      reason: "webhookUrl host name odd.example.com could not be looked up",
    });
  });

  it("looks up the host name without brackets, port or trailing dot", async () => {
    const asked: string[] = [];
    await checkWebhookUrl("https://Hooks.Example.com.:8443/path", {
      ...strict,
      lookup: async (host) => {
        asked.push(host);
        return ["93.184.216.34"];
      },
    });
    expect(asked).toEqual(["hooks.example.com"]);
  });

  it("allows a name resolving to a refused address inside an allowed CIDR", async () => {
    const result = await checkWebhookUrl("https://hooks.internal.example/", {
      allowHttp: false,
      allowedCidrs: ["10.20.0.0/16"],
      lookup: lookupTo(["10.20.30.40"]),
    });
    expect(result.ok).toBe(true);
  });

  it.each(["ENOTFOUND", "EAI_AGAIN", "ENODATA", "ETIMEOUT", "ESERVFAIL", "EREFUSED", "ECONNREFUSED", "EBADRESP", "EOF"])("accepts a name that does not resolve yet, or whose name servers fail or refuse now (%s)", async (code) => {
    const result = await checkWebhookUrl("https://not-yet-registered.example.com/", {
      ...strict,
      lookup: async () => {
        throw Object.assign(new Error("no such host"), { code });
      },
    });
    expect(result.ok).toBe(true);
  });

  it("accepts a name that the system resolver does not know", async () => {
    expect((await checkWebhookUrl("https://no-such-host.invalid/hook", strict)).ok).toBe(true);
  });

  it("refuses the URL on an unexpected lookup failure instead of accepting it (or failing the request)", async () => {
    const result = await checkWebhookUrl("https://hooks.example.com/", {
      ...strict,
      lookup: async () => {
        throw new Error("resolver crashed");
      },
    });
    expect(result).toEqual({ ok: false, reason: "webhookUrl host name hooks.example.com could not be looked up" });
  });
});
