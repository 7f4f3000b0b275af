// How every script starts the real Deno runtime on the functions.
import path from "node:path";
import { bin, ROOT } from "./paths.ts";

export const DENO = bin("deno");
// Empty counts as unset, as .env.example says ("empty means use the default").
export const DENO_DIR = process.env.DENO_DIR || path.join(ROOT, ".cache", "deno");

/**
 * The function's import map and lock: every Deno command on its code resolves packages the same
 * way. `config`: another deno.json with the same packages (a test's, mapping one module elsewhere:
 * tests/support/probe-stack.ts).
 */
export function functionConfigArgs(config = path.join(ROOT, "functions/api/deno.json")): string[] {
  return ["--config", config, "--lock", path.join(ROOT, "functions/api/deno.lock")];
}

export const FUNCTION_CONFIG_ARGS = functionConfigArgs();

export function denoServeArgs(config?: string): string[] {
  return [
    "run",
    ...functionConfigArgs(config),
    "--allow-net", "--allow-env", "--allow-read",
    // Keeps V8's heap near what the function really holds: the young
    // generation capped at 2 MB per semi-space (its garbage is short-lived
    // request data; the default nursery grows to tens of MB), and the old
    // generation allowed to grow by 30% over what survived the last full
    // collection before the next one (V8's own factor goes up to 4×, and the
    // function's live heap is small). No cap: a big request still gets the
    // memory it needs. docs/performance-history.md: peak RSS ~264 MB without flags;
    // with these ~125 MB against ~140 MB with 4 MB semi-spaces, at the same
    // deno CPU per 500-op push since a push makes less garbage (~9% more per
    // pull page, the pull's throughput unchanged).
    "--v8-flags=--max-semi-space-size=2,--heap-growing-percent=30",
    path.join(ROOT, "scripts/serve-functions.ts"),
  ];
}

/**
 * `deno install` of the server's entry point: its npm packages downloaded and its
 * modules transpiled into DENO_DIR. A server started on an empty cache does that
 * itself, and keeps ~6-10 MB more resident for the rest of its life (bench/run.ts
 * measures the server's memory, which a deployed function never spends so).
 */
export function denoInstallArgs(): string[] {
  return [
    "install",
    ...FUNCTION_CONFIG_ARGS,
    "--entrypoint", path.join(ROOT, "scripts/serve-functions.ts"),
  ];
}

export function denoEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  return { ...process.env, DENO_DIR, DENO_NO_UPDATE_CHECK: "1", NO_COLOR: "1", ...extra };
}

/** `deno check` of the function's entry point and the local gateway, with the function's import map and lock. */
export function denoCheckArgs(): string[] {
  return [
    "check",
    ...FUNCTION_CONFIG_ARGS,
    path.join(ROOT, "functions/api/index.ts"),
    path.join(ROOT, "scripts/serve-functions.ts"),
  ];
}
