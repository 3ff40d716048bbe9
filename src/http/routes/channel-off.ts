// The refusal of a send asked of an existing alert (its test, a redelivery) on a channel this
// deployment cannot send by (notify/transports.ts). Taken, the notification was retried and
// failed in the worker: its owner read 202 and received nothing, and a redelivery spent quota.
import type { NotificationMethod } from "../../domain/types.ts";
import { channelOffMessage } from "../../notify/transports.ts";
import { ProblemError } from "../problem.ts";

/**
 * A 409 `conflict`, not the create's 400: a create names the channel in its body
 * (body.notificationMethod), so the request is what is wrong and another channel mends it. Here
 * the request is valid and names no channel; the alert is valid too: what stands in the way is
 * the state of the deployment against the alert's, as for a test of an alert with no
 * destination or a redelivery of a disabled alert's (409s too). DESIGN section 3 has no code
 * of its own for it: a new failure takes its status's code and says what it is in its detail,
 * which is the create's sentence (channelOffMessage).
 */
export function assertChannelOn(channelsOff: readonly NotificationMethod[], channel: NotificationMethod, what: string): void {
  if (channel === "webhook" || !channelsOff.includes(channel)) return;
  throw new ProblemError("conflict", `${what} cannot be sent: ${channelOffMessage(channel)}`);
}
