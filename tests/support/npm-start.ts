// `npm start` as a user runs it, for tests that need the whole local stack:
// on a database of its own (DATABASE_URL, the owner role) and a free port, so
// it never meets a developer's own `npm start`. Reads what it prints: the API
// URL and the sample users with their dev-only tokens.
import { type ChildProcess, spawn } from "node:child_process";
import { ROOT } from "../../scripts/lib/paths.ts";
import { createTempDatabase, type TempDatabase } from "../../scripts/lib/temp-database.ts";
import { freePort } from "./functions-server.ts";

export interface SampleUserLine {
  name: string;
  email: string;
  userId: string;
  sessionId: string;
  token: string;
}

export interface NpmStart {
  /** The project URL the way supabase-js takes it (functions at `${supabaseUrl}/functions/v1/api/…`). */
  supabaseUrl: string;
  users: SampleUserLine[];
  database: TempDatabase;
  /** Everything it printed up to the end of its banner (stdout and stderr). */
  output: string;
  stop(): Promise<void>;
}

/** The sample users as `npm start` prints them: a line with name, email, ids, then one with the token. */
export function parseSampleUsers(output: string): SampleUserLine[] {
  const users: SampleUserLine[] = [];
  const pattern = /^ {2}(.+?)\s{2,}(\S+@\S+)\s+user ([0-9a-f-]{36})\s+session ([0-9a-f-]{36})\n {4}(eyJ[\w-]+\.[\w-]+\.[\w-]+)$/gm;
  for (const m of output.matchAll(pattern)) users.push({ name: m[1].trim(), email: m[2], userId: m[3], sessionId: m[4], token: m[5] });
  return users;
}

export async function startNpmStart(options: { readyTimeoutMs?: number; prepare?: (database: TempDatabase) => Promise<void> } = {}): Promise<NpmStart> {
  // Set up with the sample, as a first db:setup leaves it: npm start loads the seed only into a new schema.
  const database = await createTempDatabase("tidesync_npmstart", { seed: true });
  const port = await freePort();
  let child: ChildProcess | undefined;
  const stop = async () => {
    if (child?.pid !== undefined && child.exitCode === null) {
      const exited = new Promise((resolve) => child!.once("exit", resolve));
      process.kill(-child.pid, "SIGTERM"); // its own process group: npm, tsx and Deno
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 10_000))]);
    }
    await database.drop();
  };
  try {
    await options.prepare?.(database); // what a developer did to the database before this start
    let output = "";
    child = spawn("npm", ["start"], {
      cwd: ROOT,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, DATABASE_URL: database.ownerDbUrl, TIDESYNC_PORT: String(port) },
    });
    child.stdout!.on("data", (chunk) => (output += chunk));
    child.stderr!.on("data", (chunk) => (output += chunk));
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`npm start did not come up within ${options.readyTimeoutMs ?? 180_000} ms:\n${output}`)),
        options.readyTimeoutMs ?? 180_000);
      const check = () => {
        if (/Ctrl-C stops everything/.test(output)) {
          clearTimeout(timer);
          resolve();
        }
      };
      child!.stdout!.on("data", check);
      child!.once("exit", (code) => {
        clearTimeout(timer);
        reject(new Error(`npm start exited (${code}) before it was up:\n${output}`));
      });
    });
    const users = parseSampleUsers(output);
    if (users.length === 0) throw new Error(`npm start printed no sample user:\n${output}`);
    return { supabaseUrl: `http://127.0.0.1:${port}`, users, database, output, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
