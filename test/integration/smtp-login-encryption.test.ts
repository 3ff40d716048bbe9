// An smtp:// login to a server off this machine waits for STARTTLS: nodemailer upgrades only
// when the server offers it, so anyone on the path who strips the offer from its EHLO reply
// would read SMTP_URL's password. Against a real SMTP server that offers no STARTTLS, on this
// machine's own network address (not loopback, where a login in clear text stays allowed).
import { networkInterfaces, tmpdir } from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEmailChannel } from "../../src/notify/channels/email.ts";
import { renderDisabledNotice } from "../../src/notify/render.ts";
import { startSmtpPeer, type SmtpPeer } from "../helpers/smtp-peer.ts";

/** This machine's first IPv4 address that is not loopback. */
function networkAddress(): string {
  const found = Object.values(networkInterfaces())
    .flat()
    .find((address) => address?.family === "IPv4" && !address.internal);
  if (!found) throw new Error("this test needs a network interface with an IPv4 address besides loopback");
  return found.address;
}

const notice = renderDisabledNotice({
  alertId: "alr_1",
  condition: "large_transfer",
  walletName: "Treasury",
  address: "7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU",
  reason: "the webhook endpoint answered 410 Gone",
  channel: "webhook",
  destination: "https://hooks.example.com/alerts",
});
let peer: SmtpPeer;
let host: string;

beforeAll(async () => {
  host = networkAddress();
  peer = await startSmtpPeer({ login: { user: "alerts", password: "s3cret-smtp-pass" }, host });
});
afterAll(async () => {
  await peer?.close();
});

async function sendThrough(smtpUrl: string) {
  const channel = createEmailChannel({ smtpUrl, from: "alerts@example.com", timeoutMs: 5_000, outboxDir: tmpdir() });
  try {
    return await channel.sendMail("ops@fund.example", notice);
  } finally {
    await channel.close();
  }
}

describe("an smtp:// login off loopback", () => {
  it("is never sent to a server that offers no STARTTLS: the send fails as the deployment's fault, naming encryption", async () => {
    const before = { logins: peer.logins.length, messages: peer.messages.length };
    const result = await sendThrough(`smtp://alerts:s3cret-smtp-pass@${host}:${peer.port}`);
    expect(result).toMatchObject({ errorCode: "ETLS", deploymentFault: "encryption" });
    expect(peer.logins.length).toBe(before.logins);
    expect(peer.messages.length).toBe(before.messages);
  });

  it("goes out in clear text when SMTP_URL says ?requireTLS=false", async () => {
    const result = await sendThrough(`smtp://alerts:s3cret-smtp-pass@${host}:${peer.port}/?requireTLS=false`);
    expect(result.error).toBeUndefined();
    expect(peer.logins.at(-1)).toBe("alerts");
    expect(peer.messages.at(-1)?.to).toEqual(["ops@fund.example"]);
  });

  it("needs no encryption without a login (a relay on a private network)", async () => {
    const open = await startSmtpPeer({ host });
    try {
      const channel = createEmailChannel({ smtpUrl: open.url, from: "alerts@example.com", timeoutMs: 5_000, outboxDir: tmpdir() });
      const result = await channel.sendMail("ops@fund.example", notice).finally(() => channel.close());
      expect(result.error).toBeUndefined();
      expect(open.messages).toHaveLength(1);
    } finally {
      await open.close();
    }
  });
});
