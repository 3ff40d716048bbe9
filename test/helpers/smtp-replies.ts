// SMTP failures as the email channel meets them, for the unit tests of whose fault a failure
// is and how loud it is logged (retry-policy.ts, smtp-faults.ts).
import { smtpFault, type SmtpFailure } from "../../src/notify/channels/smtp-faults.ts";

/** A server's reply as nodemailer reports it: its error code, the reply code, the command it answered, the reply. */
export const smtpReply = (command: string, text: string, errorCode = "EENVELOPE"): SmtpFailure => ({
  errorCode,
  smtpResponseCode: Number(text.slice(0, 3)),
  command,
  text,
});

/** The attempt as the email channel reports it (email.ts spreads smtpFault into it). */
export const emailAttempt = (failure: SmtpFailure) => ({ errorCode: failure.errorCode, smtpResponseCode: failure.smtpResponseCode, ...smtpFault(failure) });
