// The signals a process stops on, in one place. The first asks for a graceful stop (finish
// what is in flight, within a bound); a second one means "now" and exits at once.
export const STOP_SIGNALS = ["SIGTERM", "SIGINT"] as const;

export function onStopSignal(
  stop: (signal: string) => Promise<void>,
  log: (message: string) => void,
  exit: (code: number) => void = (code) => process.exit(code),
): void {
  let stopping = false;
  for (const signal of STOP_SIGNALS) {
    process.on(signal, () => {
      if (stopping) {
        log(`${signal} again: exiting now`);
        exit(1);
        return;
      }
      stopping = true;
      log(`${signal}: stopping gracefully (send it again to exit at once)`);
      stop(signal).then(
        () => exit(0),
        (error: unknown) => {
          log(`graceful stop failed: ${(error as Error).message}`);
          exit(1);
        },
      );
    });
  }
}
