// Starts the edge functions with the real Deno runtime (scripts/serve-functions.ts)
// and waits until they answer; shared by `npm start` and the test harness.
import { type ChildProcess, spawn } from "node:child_process";
import type { Writable } from "node:stream";
import { DENO, denoEnv, denoServeArgs } from "./deno.ts";
import { ROOT } from "./paths.ts";
import { assertPortFree } from "./ports.ts";
import { urlHost } from "./url-host.ts";

export interface FunctionsProcess {
  /** http://host:port/functions/v1 */
  baseUrl: string;
  /** baseUrl + /api: where the `api` function's /v1/... routes live. */
  apiUrl: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

export interface FunctionsProcessOptions {
  env: Record<string, string>;
  port: number;
  /** The interface to listen on (TIDESYNC_HOST); default 127.0.0.1. */
  host?: string;
  /** Where Deno's stdout/stderr go: a stream, or this process' own ("inherit"). */
  output: Writable | "inherit";
  readyTimeoutMs?: number;
  /** Named in errors (e.g. where the log file is). */
  describe?: string;
  /** Another deno.json than the function's own (see functionConfigArgs). */
  denoConfig?: string;
}

export async function startFunctionsProcess(options: FunctionsProcessOptions): Promise<FunctionsProcess> {
  const host = options.host ?? "127.0.0.1";
  // The probe below takes any server on the port for this one.
  await assertPortFree(options.port, host, "TIDESYNC_PORT", "the functions");
  const child = spawn(DENO, denoServeArgs(options.denoConfig), {
    cwd: ROOT,
    env: denoEnv({ ...options.env, TIDESYNC_PORT: String(options.port), TIDESYNC_HOST: host }),
    stdio: ["ignore", options.output === "inherit" ? "inherit" : "pipe", options.output === "inherit" ? "inherit" : "pipe"],
  });
  if (options.output !== "inherit") {
    child.stdout?.pipe(options.output);
    child.stderr?.pipe(options.output);
  }
  let exited: number | null = null;
  child.on("exit", (code) => (exited = code ?? -1));

  const baseUrl = `http://${urlHost(host)}:${options.port}/functions/v1`;
  const where = options.describe ? `; ${options.describe}` : "";
  const deadline = Date.now() + (options.readyTimeoutMs ?? 180_000);
  for (;;) {
    if (exited !== null) throw new Error(`the functions server exited with ${exited} before answering${where}`);
    try {
      // The OpenAPI document: the route that needs no database (GET /v1/meta reads the
      // database's clock), so a server meant to face a dead database is ready too.
      const response = await fetch(`${baseUrl}/api/v1/openapi.json`);
      await response.body?.cancel();
      if (response.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`the functions server did not answer within the deadline${where}`);
    }
    await new Promise((r) => setTimeout(r, 150));
  }

  return {
    baseUrl,
    apiUrl: `${baseUrl}/api`,
    process: child,
    async stop() {
      if (exited !== null) return;
      await new Promise<void>((resolve) => {
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
        setTimeout(() => child.kill("SIGKILL"), 5000).unref();
      });
    },
  };
}
