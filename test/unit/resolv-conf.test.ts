import { describe, expect, it } from "vitest";
import { parseResolvConf } from "../../src/notify/resolv-conf.ts";

describe("a resolv.conf's name servers", () => {
  it("are its nameserver lines' addresses, IPv4 and IPv6, in file order, other keywords ignored", () => {
    const text = "search desk.test corp.test\nnameserver 10.0.0.2\noptions ndots:2 timeout:1\nnameserver 2001:db8::53\ndomain desk.test\nnameserver 192.0.2.1\n";
    expect(parseResolvConf(text)).toEqual(["10.0.0.2", "2001:db8::53", "192.0.2.1"]);
  });

  it("leave out comment lines (# or ;) and what follows # or ; on a line", () => {
    const text = "# nameserver 192.0.2.1\n; nameserver 192.0.2.2\n  #nameserver 192.0.2.3\nnameserver 192.0.2.4 # the office\nnameserver 192.0.2.5;the lab\n";
    expect(parseResolvConf(text)).toEqual(["192.0.2.4", "192.0.2.5"]);
  });

  it("take the ports c-ares reads there, in the form setServers takes: host:port, and [IPv6]:port", () => {
    const text = "nameserver 127.0.0.1:5353\nnameserver [::1]:5354\nnameserver [192.0.2.7]:54\nnameserver [2001:db8::1]\n";
    expect(parseResolvConf(text)).toEqual(["127.0.0.1:5353", "[::1]:5354", "192.0.2.7:54", "2001:db8::1"]);
  });

  it("are read from lines with surrounding blanks, tabs, CRLF ends, and several servers a line (spaces or commas)", () => {
    const text = "  nameserver\t192.0.2.1  \r\nnameserver 192.0.2.2 192.0.2.3,192.0.2.4\r\n";
    expect(parseResolvConf(text)).toEqual(["192.0.2.1", "192.0.2.2", "192.0.2.3", "192.0.2.4"]);
  });

  it("drop an IPv6 link-local address's interface, which setServers has no form for", () => {
    expect(parseResolvConf("nameserver fe80::1%eth0\nnameserver [fe80::2]:5353%eth1\n")).toEqual(["fe80::1", "[fe80::2]:5353"]);
  });

  it("skip what is no IP address, a port outside 1-65535, a keyword not spelled in lower case, and a server named twice", () => {
    const text = [
      "nameserver dns.desk.test",
      "nameserver 1.2.3",
      "nameserver 192.0.2.1:0",
      "nameserver 192.0.2.2:65536",
      "nameserver 2001:db8::1:53x",
      "NAMESERVER 192.0.2.3",
      "nameservers 192.0.2.4",
      "nameserver",
      "nameserver 192.0.2.5",
      "nameserver 192.0.2.5",
    ].join("\n");
    expect(parseResolvConf(text)).toEqual(["192.0.2.5"]);
  });

  it("are none when the file names none (the caller then keeps c-ares's default)", () => {
    expect(parseResolvConf("")).toEqual([]);
    expect(parseResolvConf("# generated\nsearch desk.test\noptions edns0\n")).toEqual([]);
  });
});
