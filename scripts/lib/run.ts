// Runs a command, streaming nothing unless it fails; then its output is in the error.
import { spawn } from "node:child_process";
import { redactPasswords } from "./redact.ts";

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

export function run(command: string, args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env ?? process.env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    const timer = options.timeoutMs ? setTimeout(() => child.kill("SIGKILL"), options.timeoutMs) : undefined;
    child.on("error", reject);
    child.on("close", (code) => {
      if (timer) clearTimeout(timer);
      resolve({ code: code ?? -1, stdout, stderr });
    });
  });
}

export async function runOrThrow(command: string, args: string[], options: Parameters<typeof run>[2] = {}): Promise<RunResult> {
  const result = await run(command, args, options);
  if (result.code !== 0) {
    // Its arguments and output may hold a database URL with its password (supabase db push --db-url).
    throw new Error(redactPasswords(`${command} ${args.join(" ")} exited with ${result.code}\n${result.stdout}\n${result.stderr}`));
  }
  return result;
}
