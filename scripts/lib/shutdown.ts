// Cleanups that must run however a script ends: normally, on an error, or on
// Ctrl-C / SIGTERM (e.g. dropping the temporary databases a run created).
type Cleanup = () => Promise<void> | void;

const cleanups: Cleanup[] = [];
let installed = false;
let shuttingDown = false;

export async function runCleanups(): Promise<void> {
  // Last registered first, like nested try/finally blocks.
  while (cleanups.length > 0) {
    const cleanup = cleanups.pop()!;
    try {
      await cleanup();
    } catch (error) {
      console.error(`cleanup failed: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
}

/** True once a signal started the shutdown (a child exiting then is expected, not a failure). */
export function isShuttingDown(): boolean {
  return shuttingDown;
}

/** Registers `cleanup`; returns a function that runs it now and unregisters it. */
export function onShutdown(cleanup: Cleanup): () => Promise<void> {
  if (!installed) {
    installed = true;
    for (const [signal, code] of [["SIGINT", 130], ["SIGTERM", 143]] as const) {
      process.on(signal, () => {
        if (shuttingDown) return;
        shuttingDown = true;
        console.error(`\n${signal}: cleaning up…`);
        void runCleanups().finally(() => process.exit(code));
      });
    }
  }
  cleanups.push(cleanup);
  return async () => {
    const index = cleanups.indexOf(cleanup);
    if (index === -1) return;
    cleanups.splice(index, 1);
    await cleanup();
  };
}
