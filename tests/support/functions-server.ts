// Starts the functions with the real Deno runtime on a free port and waits
// until they answer; used by the test stack and by tests that need a second
// server with other settings (a dead database, tiny rate limits).
import { createWriteStream } from "node:fs";
import { mkdir } from "node:fs/promises";
import net from "node:net";
import path from "node:path";
import { type FunctionsProcess, startFunctionsProcess } from "../../scripts/lib/functions-process.ts";
import { ROOT } from "../../scripts/lib/paths.ts";

export interface FunctionsServer extends FunctionsProcess {
  logFile: string;
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

export async function startFunctionsServer(
  env: Record<string, string>,
  options: { name?: string; readyTimeoutMs?: number; denoConfig?: string } = {},
): Promise<FunctionsServer> {
  const port = await freePort();
  const logDir = path.join(ROOT, ".cache", "test-logs");
  await mkdir(logDir, { recursive: true });
  const logFile = path.join(logDir, `${options.name ?? "functions"}-${port}.log`);
  const server = await startFunctionsProcess({
    env,
    port,
    output: createWriteStream(logFile),
    readyTimeoutMs: options.readyTimeoutMs,
    denoConfig: options.denoConfig,
    describe: `see ${logFile}`,
  });
  return { ...server, logFile };
}
