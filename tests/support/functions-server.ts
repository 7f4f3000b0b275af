// Starts the functions with the real Deno runtime on a free port and waits
// until they answer; used by the test stack and by tests that need a second
// server with other settings (a dead database, tiny rate limits).
import { type ChildProcess, spawn } from "node:child_process";
import { createWriteStream } from "node:fs";
import { mkdir } from "node:fs/promises";
import net from "node:net";
import path from "node:path";
import { DENO, denoEnv, denoServeArgs } from "../../scripts/lib/deno.ts";
import { ROOT } from "../../scripts/lib/paths.ts";

export interface FunctionsServer {
  baseUrl: string;
  apiUrl: string;
  logFile: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return await new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export async function startFunctionsServer(env: Record<string, string>, options: { name?: string; readyTimeoutMs?: number } = {}): Promise<FunctionsServer> {
  const port = await freePort();
  const logDir = path.join(ROOT, ".cache", "test-logs");
  await mkdir(logDir, { recursive: true });
  const logFile = path.join(logDir, `${options.name ?? "functions"}-${port}.log`);
  const log = createWriteStream(logFile);
  const child = spawn(DENO, denoServeArgs(), {
    cwd: ROOT,
    env: denoEnv({ ...env, TIDESYNC_PORT: String(port), TIDESYNC_HOST: "127.0.0.1" }),
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout?.pipe(log);
  child.stderr?.pipe(log);
  let exited: number | null = null;
  child.on("exit", (code) => (exited = code ?? -1));

  const baseUrl = `http://127.0.0.1:${port}/functions/v1`;
  const deadline = Date.now() + (options.readyTimeoutMs ?? 180_000);
  for (;;) {
    if (exited !== null) throw new Error(`the functions server exited with ${exited} before answering; see ${logFile}`);
    try {
      const response = await fetch(`${baseUrl}/api/v1/meta`);
      if (response.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`the functions server did not answer within the deadline; see ${logFile}`);
    }
    await new Promise((r) => setTimeout(r, 150));
  }

  return {
    baseUrl,
    apiUrl: `${baseUrl}/api`,
    logFile,
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
