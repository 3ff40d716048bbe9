// What the log and the queue may show of a recipient named in a provider's refusal
// (domain/recipient-mask.ts): a number's last 4 digits, an address's first character and domain.
import { describe, expect, it } from "vitest";
import { maskedEmail, withRecipientsMasked } from "../../src/domain/recipient-mask.ts";

describe("a provider's refusal as the log shows it", () => {
  it("masks Twilio's 21211 naming the notification's number, spaced or not, with or without its plus", () => {
    const twilio = "Twilio 21211: The 'To' number +14155552699 is not a valid phone number. (https://www.twilio.com/docs/errors/21211)";
    expect(withRecipientsMasked(twilio, "+14155552699")).toBe(
      "Twilio 21211: The 'To' number +*******2699 is not a valid phone number. (https://www.twilio.com/docs/errors/21211)",
    );
    expect(withRecipientsMasked("number 14155552699 refused; +1 (415) 555-2699 too", "+14155552699")).toBe("number +*******2699 refused; +*******2699 too");
  });

  it("masks an SMTP server's echo of the address, whatever its case, and any other address or international number in the text", () => {
    const postfix = "550: 550 <Bounce.Jane@FUND.example>: Recipient address rejected: User unknown in virtual mailbox table";
    expect(withRecipientsMasked(postfix, "bounce.jane@fund.example")).toBe(
      "550: 550 <b***@fund.example>: Recipient address rejected: User unknown in virtual mailbox table",
    );
    expect(withRecipientsMasked("forwarded to jane.doe+alerts@élan.example, call +447911123456", null)).toBe("forwarded to j***@élan.example, call +********3456");
  });

  it("leaves texts without a recipient as they are: status codes, error codes, addresses of peers, Twilio's links", () => {
    for (const text of ["HTTP 400", "ECONNREFUSED: connect ECONNREFUSED [address]", "451 4.3.0 try again later (5.1.1)", "Twilio 21610 (https://www.twilio.com/docs/errors/21610)"]) {
      expect(withRecipientsMasked(text, "+14155552699")).toBe(text);
    }
  });

  it("keeps a masked address as it is", () => {
    expect(maskedEmail("j***@fund.example")).toBe("j***@fund.example");
    expect(withRecipientsMasked("j***@fund.example", "jane@fund.example")).toBe("j***@fund.example");
  });
});
