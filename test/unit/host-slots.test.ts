import { describe, expect, it } from "vitest";
import { createHostSlots, receiverOf } from "../../src/notify/host-slots.ts";

const quick = { durationMs: 5, answered: true };
const slow = { durationMs: 1_500, answered: true };
const unanswered = { durationMs: 200, answered: false };

describe("createHostSlots", () => {
  it("gives a receiver it knows nothing of the floor, and refuses the next one over it", () => {
    const slots = createHostSlots({ floor: 2, ceiling: 10, slowMs: 1_000 });
    expect([slots.tryTake("a"), slots.tryTake("a"), slots.tryTake("a")]).toEqual([true, true, false]);
    // Another receiver's slots are its own.
    expect(slots.tryTake("b")).toBe(true);
  });

  it("grows a receiver's cap by one per quick answer, up to the ceiling", () => {
    const slots = createHostSlots({ floor: 2, ceiling: 4, slowMs: 1_000 });
    for (let i = 0; i < 5; i++) {
      expect(slots.tryTake("a")).toBe(true);
      slots.give("a", quick);
    }
    expect(slots.capOf("a")).toBe(4);
    expect([1, 2, 3, 4, 5].map(() => slots.tryTake("a"))).toEqual([true, true, true, true, false]);
  });

  it("halves the cap on a slow or unanswered attempt, never below the floor", () => {
    const slots = createHostSlots({ floor: 2, ceiling: 16, slowMs: 1_000 });
    for (let i = 0; i < 14; i++) {
      slots.tryTake("a");
      slots.give("a", quick);
    }
    expect(slots.capOf("a")).toBe(16);
    slots.tryTake("a");
    slots.give("a", slow);
    expect(slots.capOf("a")).toBe(8);
    for (const attempt of [unanswered, unanswered, unanswered, unanswered]) {
      slots.tryTake("a");
      slots.give("a", attempt);
    }
    expect(slots.capOf("a")).toBe(2);
  });

  it("frees a slot when it is given back", () => {
    const slots = createHostSlots({ floor: 1, ceiling: 1, slowMs: 1_000 });
    expect(slots.tryTake("a")).toBe(true);
    expect(slots.tryTake("a")).toBe(false);
    slots.give("a", slow);
    expect(slots.tryTake("a")).toBe(true);
  });
});

describe("receiverOf", () => {
  it("names a receiver by its registrable domain, whatever the subdomain, port, case or trailing dot", () => {
    expect(receiverOf("https://Hooks.Example.com/a?b=1")).toBe("example.com");
    const tarpit = ["https://a.tarpit.example/h", "https://b.tarpit.example:8443/h", "https://C.TARPIT.EXAMPLE/h", "https://d.tarpit.example./h", "https://tarpit.example/h", "https://x_1.deep.tarpit.example/h"];
    expect(new Set(tarpit.map(receiverOf))).toEqual(new Set(["tarpit.example"]));
  });

  it("tells apart the domains under a public suffix", () => {
    expect(receiverOf("https://hooks.acme.co.uk/h")).toBe("acme.co.uk");
    expect(receiverOf("https://hooks.other.co.uk/h")).toBe("other.co.uk");
  });

  it("tells apart the tenants of a hosting platform (the Public Suffix List's private section): one tenant's hanging endpoint must not cap the others'", () => {
    const tenants = [
      "https://abc123.execute-api.us-east-1.amazonaws.com/prod/hook",
      "https://def456.execute-api.us-east-1.amazonaws.com/prod/hook",
      "https://xyz.lambda-url.us-east-1.on.aws/",
      "https://fund-a.azurewebsites.net/hook",
      "https://fund-b.azurewebsites.net/hook",
      "https://desk.herokuapp.com/hook",
    ];
    expect(new Set(tenants.map(receiverOf)).size).toBe(tenants.length);
    expect(receiverOf("https://v2.abc123.execute-api.us-east-1.amazonaws.com/h")).toBe("abc123.execute-api.us-east-1.amazonaws.com");
  });

  it("keys an IPv4 literal on itself and an IPv6 literal on its /64, with its IPv4-mapped form on the IPv4 address", () => {
    expect(receiverOf("http://127.0.0.1:8080/hook")).toBe("127.0.0.1");
    expect(receiverOf("http://0x7f.1/hook")).toBe("127.0.0.1");
    expect(receiverOf("http://[::ffff:127.0.0.1]/hook")).toBe("127.0.0.1");
    expect(receiverOf("https://[2001:db8:1:2::1]/h")).toBe("2001:db8:1:2::/64");
    expect(receiverOf("https://[2001:DB8:1:2:ffff::9]:8443/h")).toBe("2001:db8:1:2::/64");
    expect(receiverOf("https://[2001:db8:1:3::1]/h")).toBe("2001:db8:1:3::/64");
  });

  it("keys a name that has no registrable domain on the name itself", () => {
    expect(receiverOf("http://localhost:3000/h")).toBe("localhost");
  });

  it("is undefined for what is no URL", () => {
    expect(receiverOf("not a url")).toBeUndefined();
  });
});
