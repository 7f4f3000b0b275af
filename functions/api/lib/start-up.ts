// The function's start-up (reading its configuration, importing its token
// verification keys, building the app) runs before
// keepServingOnUncaughtErrors is installed: a refused setting must end
// the process with a non-zero status and its message, not be logged as an
// "unhandled rejection (kept serving)" by a process that then exits with 0.
// Deno-only (Deno.exit), so it is not in _shared/.
export async function startOrExit<T>(start: () => T | Promise<T>): Promise<T> {
  try {
    return await start();
  } catch (error) {
    console.error(JSON.stringify({
      level: "fatal",
      time: new Date().toISOString(),
      msg: "the function cannot start",
      error: error instanceof Error ? error.message : String(error),
    }));
    Deno.exit(1);
  }
}
