// Webhook host names are resolved by c-ares (createHostResolver), against a real name server on
// loopback: one that never answers holds no libuv threadpool thread, so it cannot stall other
// owners' webhooks (nor the SMTP, Twilio and PostgreSQL lookups that need a thread), and names
// the name servers do not know are still asked of the system (/etc/hosts). The name servers are
// those resolv.conf names when the lookup is made, not when the process started.
//
// resolv.conf tests: two name servers answering one name differently, on 127.0.0.1 at two ports,
// named in a resolv.conf of the test's own as "nameserver 127.0.0.1:<port>". That is c-ares's
// syntax (c-ares is the Resolver, and reads /etc/resolv.conf so: "host:port", "[v6]:port"),
// though not glibc's; so the file is one c-ares itself would read the same way. Not port 53 on
// 127.0.0.2 and 127.0.0.3: that needs root (we may be root, CI need not be), and 53 may be taken
// (a local stub resolver, a second test run).
import { pbkdf2 } from "node:crypto";
import { mkdtempSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createWebhookChannel } from "../../src/notify/channels/webhook.ts";
import { createHostResolver } from "../../src/notify/resolve-host.ts";
import { samplePayload } from "../helpers/delivery.ts";
import { startDnsServer, type DnsServer } from "../helpers/dns-server.ts";
import { waitFor } from "../helpers/wait.ts";
import { startWebhookReceiver, type WebhookReceiver } from "../helpers/webhook-receiver.ts";

let dns: DnsServer;
let receiver: WebhookReceiver;
/** Two name servers, each its own answer for moving.desk.test, slow.desk.test given late. */
let before: DnsServer;
let after: DnsServer;
let resolvConfDir: string;

beforeAll(async () => {
  dns = await startDnsServer((name) => {
    if (name.endsWith(".tarpit.test")) return "silent";
    if (name === "hooks.desk.test") return { a: ["127.0.0.1"] };
    if (name === "public.desk.test") return { a: ["93.184.216.34", "93.184.216.35"] };
    return "nxdomain";
  });
  receiver = await startWebhookReceiver();
  before = await startDnsServer((name) => {
    if (name === "moving.desk.test") return { a: ["192.0.2.10"] };
    if (name === "slow.desk.test") return { a: ["192.0.2.11"], delayMs: 300 };
    return "nxdomain";
  });
  after = await startDnsServer((name) => (name === "moving.desk.test" ? { a: ["192.0.2.20"] } : "nxdomain"));
  resolvConfDir = mkdtempSync(join(tmpdir(), "resolv-conf-"));
});
afterAll(async () => {
  await receiver?.close();
  await dns?.close();
  await before?.close();
  await after?.close();
  if (resolvConfDir) rmSync(resolvConfDir, { recursive: true, force: true });
});

/** Settles to what happened, in the order things settled. */
function track<T>(promise: Promise<T>, label: string, order: string[]): Promise<void> {
  return promise.then(
    () => void order.push(label),
    () => void order.push(label),
  );
}

const threadpoolWork = () => new Promise((resolve, reject) => pbkdf2("x", "salt", 20_000, 32, "sha256", (error, key) => (error ? reject(error) : resolve(key))));

describe("webhook host names", () => {
  it("are resolved through the name servers, every address the name has", async () => {
    const resolve = createHostResolver({ servers: [dns.address] });
    expect(await resolve("public.desk.test")).toEqual(["93.184.216.34", "93.184.216.35"]);
  });

  it("fail with ETIMEOUT once a name server that never answers has had its tries", async () => {
    const resolve = createHostResolver({ servers: [dns.address], timeoutMs: 200, tries: 2 });
    await expect(resolve("n1.tarpit.test")).rejects.toMatchObject({ code: "ETIMEOUT" });
  });

  it("hold no threadpool thread while a name server stays silent: threadpool work queued behind eight such lookups finishes first", async () => {
    const resolve = createHostResolver({ servers: [dns.address], timeoutMs: 2_000, tries: 1 });
    const order: string[] = [];
    const lookups = Array.from({ length: 8 }, (_, i) => track(resolve(`n${i}.tarpit.test`), `lookup ${i}`, order));
    await Promise.all(Array.from({ length: 8 }, (_, i) => track(threadpoolWork(), `work ${i}`, order)));
    await Promise.all(lookups);
    expect(order.slice(0, 8).every((label) => label.startsWith("work"))).toBe(true);
  });

  it("let another owner's webhook through while eight deliveries wait on a silent name server", async () => {
    const channel = createWebhookChannel({
      allowHttp: true,
      allowedCidrs: ["127.0.0.0/8"],
      timeoutMs: 3_000,
      resolve: createHostResolver({ servers: [dns.address], timeoutMs: 2_500, tries: 1 }),
    });
    const route = receiver.route("/desk");
    const send = (destination: string) =>
      channel.send({
        notificationId: "ntf_dns",
        destination,
        payload: samplePayload({ alertId: "alr_dns", walletId: "wal_dns", address: "CoEnXgSVcycv9wuPFFitTXJWbJh2Eaoa6pRbzK3b9ALH" }),
        secrets: ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"],
        attemptAt: new Date(),
      });
    try {
      const order: string[] = [];
      const stalled = Array.from({ length: 8 }, (_, i) => track(send(`http://n${i}.tarpit.test/hook`), `tarpit ${i}`, order));
      const healthy = await send(`http://hooks.desk.test:${receiver.port}/desk`);
      order.push("healthy");
      expect(healthy).toMatchObject({ statusCode: 200 });
      expect(route.requests).toHaveLength(1);
      await Promise.all(stalled);
      expect(order[0]).toBe("healthy");
    } finally {
      await channel.close();
    }
  });

  it("that the hosts file lists resolve from it, whatever the name servers do, and follow its changes", async () => {
    const hostsFile = join(mkdtempSync(join(tmpdir(), "hosts-")), "hosts");
    writeFileSync(hostsFile, "# comment\n127.0.0.1 localhost\n203.0.113.7 hooks.internal.test  # the desk's relay\n2001:db8::7 hooks.internal.test\n");
    const resolve = createHostResolver({ servers: [dns.address], timeoutMs: 200, tries: 1, hostsFile });
    expect(await resolve("hooks.internal.test")).toEqual(["203.0.113.7", "2001:db8::7"]);
    expect(await resolve("HOOKS.internal.test.")).toEqual(["203.0.113.7", "2001:db8::7"]);
    writeFileSync(hostsFile, "203.0.113.8 hooks.internal.test\n");
    utimesSync(hostsFile, new Date(), new Date(Date.now() + 5_000));
    expect(await resolve("hooks.internal.test")).toEqual(["203.0.113.8"]);
    expect(dns.queries).not.toContain("hooks.internal.test");
  });

  it("that the name servers say do not exist are asked of the system resolver (a search-domain short name)", async () => {
    const asked: string[] = [];
    const resolve = createHostResolver({
      servers: [dns.address],
      hostsFile: "/nonexistent/hosts",
      systemLookup: async (name) => (asked.push(name), ["198.51.100.4"]),
    });
    expect(await resolve("relay")).toEqual(["198.51.100.4"]);
    expect(dns.queries).toContain("relay");
    expect(asked).toEqual(["relay"]);
  });

  it("ask the system resolver one name at a time, and skip the names whose callers gave up before their turn", async () => {
    // Each system lookup answers when the test says so.
    const pending = new Map<string, (addresses: string[]) => void>();
    const resolve = createHostResolver({
      servers: [dns.address],
      hostsFile: "/nonexistent/hosts",
      systemDeadlineMs: 300,
      systemLookup: (name) => new Promise((answer) => pending.set(name, answer)),
    });
    // Six callers; the first one's lookup never answers in time, so all six give up.
    const burst = await Promise.allSettled(Array.from({ length: 6 }, (_, i) => resolve(`gone${i}`)));
    expect(burst.every((outcome) => outcome.status === "rejected")).toBe(true);
    expect([...pending.keys()]).toEqual(["gone0"]);
    // Once it answers, the next name asked is the next caller's still waiting, not the five abandoned.
    pending.get("gone0")!(["198.51.100.4"]);
    const late = resolve("late");
    await waitFor("the late name to be asked", async () => pending.has("late"));
    pending.get("late")!(["198.51.100.5"]);
    expect(await late).toEqual(["198.51.100.5"]);
    expect([...pending.keys()]).toEqual(["gone0", "late"]);
  });

  describe("resolved by the name servers resolv.conf names", () => {
    /** A resolver on a resolv.conf of the test's own naming `server`; nothing asked of /etc/hosts or getaddrinfo. */
    function resolverOn(file: string, server: DnsServer) {
      writeFileSync(file, `# written by the test\nsearch desk.test\nnameserver ${server.address}\noptions ndots:1\n`);
      return createHostResolver({ resolvConf: file, timeoutMs: 1_000, tries: 1, hostsFile: "/nonexistent/hosts", systemLookup: async () => [] });
    }
    /** Padded: one length whatever the port's digits. */
    const renaming = (file: string, server: DnsServer) => writeFileSync(file, `${`nameserver ${server.address}`.padEnd(40)}\n`);

    it("are asked of the one it names, and of another once the file is rewritten to name that one", async () => {
      const file = join(resolvConfDir, "rewritten");
      const resolve = resolverOn(file, before);
      // The file as a long-running worker finds it: written long before.
      const anHourAgo = new Date(Date.now() - 3_600_000);
      utimesSync(file, anHourAgo, anHourAgo);
      expect(await resolve("moving.desk.test")).toEqual(["192.0.2.10"]);
      renaming(file, after);
      expect(await resolve("moving.desk.test")).toEqual(["192.0.2.20"]);
      expect(after.queries).toContain("moving.desk.test");
    });

    it("are asked of the one a rewrite names even when the rewrite keeps the file's size and mtime (written within one timestamp tick)", async () => {
      const file = join(resolvConfDir, "same-tick");
      const resolve = resolverOn(file, before);
      renaming(file, before);
      const now = new Date();
      utimesSync(file, now, now);
      expect(await resolve("moving.desk.test")).toEqual(["192.0.2.10"]);
      const { size, mtimeMs } = statSync(file);
      renaming(file, after);
      utimesSync(file, now, now);
      expect(statSync(file)).toMatchObject({ size, mtimeMs });
      expect(await resolve("moving.desk.test")).toEqual(["192.0.2.20"]);
    });

    it("already asked of the one named before a rewrite get its answer, while the next lookups are asked of the one named after", async () => {
      const file = join(resolvConfDir, "in-flight");
      const resolve = resolverOn(file, before);
      const inFlight = resolve("slow.desk.test");
      await waitFor("the slow name to be asked", async () => before.queries.includes("slow.desk.test"), 2_000);
      renaming(file, after);
      expect(await resolve("moving.desk.test")).toEqual(["192.0.2.20"]);
      expect(await inFlight).toEqual(["192.0.2.11"]);
    });
  });
});
