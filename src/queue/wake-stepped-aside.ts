// Calls back delivery jobs that stepped aside from a webhook receiver while it was slow, once it
// answers quickly again (notify/host-slots.ts give says which): their delays were reckoned at the
// slow pace, up to 5 minutes. Promoted out of BullMQ's delayed set, each comes back now and takes
// a slot or steps aside again at the receiver's quick pace.
import { Job, type Queue } from "bullmq";

/**
 * Promotes each job, one after another (gently: a slow spell's line can be thousands long, and the
 * worker's other jobs share this Redis connection). Never throws: a job no longer delayed (it came
 * back by itself, or is gone) is left alone, and with Redis away the rest keep their delays, as
 * before.
 */
export async function wakeSteppedAside(queue: Queue, jobIds: readonly string[]): Promise<void> {
  for (const id of jobIds) {
    try {
      const job = await Job.fromId(queue, id);
      await job?.promote();
    } catch {
      // Not in the delayed set (BullMQ refuses the promotion), or Redis away: it wakes at its own time.
    }
  }
}
