// How every script starts the real Deno runtime on the functions.
import path from "node:path";
import { bin, ROOT } from "./paths.ts";

export const DENO = bin("deno");
export const DENO_DIR = process.env.DENO_DIR ?? path.join(ROOT, ".cache", "deno");

export function denoServeArgs(): string[] {
  return [
    "run",
    "--config", path.join(ROOT, "functions/api/deno.json"),
    "--lock", path.join(ROOT, "functions/api/deno.lock"),
    "--allow-net", "--allow-env", "--allow-read",
    // Caps V8's young generation at 4 MB per semi-space: the function's
    // garbage is short-lived request data, and the default lets the nursery
    // grow to tens of MB. docs/performance.md measured 50-60 MB less peak RSS
    // with no loss of push/pull throughput.
    "--v8-flags=--max-semi-space-size=4",
    path.join(ROOT, "scripts/serve-functions.ts"),
  ];
}

export function denoEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  return { ...process.env, DENO_DIR, DENO_NO_UPDATE_CHECK: "1", NO_COLOR: "1", ...extra };
}

/** `deno check` of the function's entry point and the local gateway, with the function's import map and lock. */
export function denoCheckArgs(): string[] {
  return [
    "check",
    "--config", path.join(ROOT, "functions/api/deno.json"),
    "--lock", path.join(ROOT, "functions/api/deno.lock"),
    path.join(ROOT, "functions/api/index.ts"),
    path.join(ROOT, "scripts/serve-functions.ts"),
  ];
}
