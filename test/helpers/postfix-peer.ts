// A loopback SMTP server (the smtp-server package) that refuses the way Postfix does. Postfix's
// default smtpd_delay_reject = yes holds its client, HELO and sender restrictions back until
// RCPT TO, so a refusal of the client's address, of its EHLO name or of its sender comes as
// the reply to RCPT TO, in Postfix's own words. It can also refuse at the greeting and at the
// end of DATA, as providers do for an account (SES "Sending paused", Office 365 SendAsDenied).
// Until told otherwise it accepts everything, and it records every message it accepts.
import type { AddressInfo } from "node:net";
import { SMTPServer, type SMTPServerSession } from "smtp-server";
import type { ReceivedMail } from "./smtp-peer.ts";

/** One of Postfix's restrictions that it reports at RCPT TO, whatever the recipient. */
export type DelayedRestriction =
  /** reject_sender_login_mismatch: "553 5.7.1 <alerts@…>: Sender address rejected: not owned by user <login>". */
  | { kind: "sender-not-owned"; login: string }
  /** reject_unknown_sender_domain: "450 4.1.8 <alerts@…>: Sender address rejected: Domain not found". */
  | { kind: "sender-domain-not-found" }
  /** check_client_access / "permit_sasl_authenticated, reject": "554 5.7.1 <unknown[ip]>: Client host rejected: Access denied". */
  | { kind: "client-host" }
  /** reject_non_fqdn_helo_hostname: "504 5.5.2 <name>: Helo command rejected: need fully-qualified hostname". */
  | { kind: "helo-not-fqdn" };

export type PostfixPeer = {
  url: string;
  messages: ReceivedMail[];
  /** Every refusal sent so far, as its text after the code ("5.7.1 <…>: Sender address rejected: …"). */
  refusals: string[];
  /** From now on, every RCPT TO is answered with this restriction's refusal, until acceptAll. */
  restrictAtRcpt: (restriction: DelayedRestriction) => void;
  /** From now on, every recipient `address` is answered "550 5.1.1 <address>: Recipient address rejected: User unknown in virtual mailbox table". */
  unknownRecipient: (address: string) => void;
  /** From now on, every connection is greeted with this refusal (`554 …`) and closed, until acceptAll. */
  refuseGreeting: (code: number, text: string) => void;
  /** From now on, every message is refused with this reply once its DATA has ended, until acceptAll. */
  refuseEndOfData: (code: number, text: string) => void;
  /** Lifts every refusal above (the operator's fix, seen from the server). */
  acceptAll: () => void;
  close: () => Promise<void>;
};

type Refusal = { code: number; text: string };

export async function startPostfixPeer(): Promise<PostfixPeer> {
  const messages: ReceivedMail[] = [];
  const refusals: string[] = [];
  const unknownRecipients = new Set<string>();
  let atRcpt: DelayedRestriction | undefined;
  let atGreeting: Refusal | undefined;
  let atEndOfData: Refusal | undefined;

  const refuse = (refusal: Refusal) => {
    refusals.push(refusal.text);
    return Object.assign(new Error(refusal.text), { responseCode: refusal.code });
  };
  const delayedRefusal = (restriction: DelayedRestriction, session: SMTPServerSession): Refusal => {
    const sender = session.envelope.mailFrom ? session.envelope.mailFrom.address : "";
    switch (restriction.kind) {
      case "sender-not-owned":
        return { code: 553, text: `5.7.1 <${sender}>: Sender address rejected: not owned by user ${restriction.login}` };
      case "sender-domain-not-found":
        return { code: 450, text: `4.1.8 <${sender}>: Sender address rejected: Domain not found` };
      case "client-host":
        return { code: 554, text: `5.7.1 <unknown[${session.remoteAddress}]>: Client host rejected: Access denied` };
      case "helo-not-fqdn":
        return { code: 504, text: `5.5.2 <${session.hostNameAppearsAs}>: Helo command rejected: need fully-qualified hostname` };
    }
  };

  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    logger: false,
    onConnect(_session, callback) {
      callback(atGreeting ? refuse(atGreeting) : undefined);
    },
    onRcptTo(address, session, callback) {
      // Postfix checks the client, HELO and sender restrictions before the recipient's.
      if (atRcpt) return callback(refuse(delayedRefusal(atRcpt, session)));
      if (unknownRecipients.has(address.address.toLowerCase())) {
        return callback(refuse({ code: 550, text: `5.1.1 <${address.address}>: Recipient address rejected: User unknown in virtual mailbox table` }));
      }
      callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.on("end", () => {
        if (atEndOfData) return callback(refuse(atEndOfData));
        messages.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
          to: session.envelope.rcptTo.map((rcpt) => rcpt.address),
          raw: Buffer.concat(chunks).toString("utf8"),
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.server.address() as AddressInfo;

  return {
    url: `smtp://127.0.0.1:${port}`,
    messages,
    refusals,
    restrictAtRcpt: (restriction) => {
      atRcpt = restriction;
    },
    unknownRecipient: (address) => {
      unknownRecipients.add(address.toLowerCase());
    },
    refuseGreeting: (code, text) => {
      atGreeting = { code, text };
    },
    refuseEndOfData: (code, text) => {
      atEndOfData = { code, text };
    },
    acceptAll: () => {
      atRcpt = undefined;
      atGreeting = undefined;
      atEndOfData = undefined;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
