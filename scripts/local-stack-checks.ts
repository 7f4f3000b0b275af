// Checks of the local-stack scripts as a developer runs them (processes, exit
// statuses, what they print, what they leave in a database). Run by
// `npm run test:migrations`, which has the Postgres they need, or alone:
// `npx tsx scripts/local-stack-checks.ts`.
import path from "node:path";
import { DENO, denoEnv, denoServeArgs, functionConfigArgs } from "./lib/deno.ts";
import { ROOT } from "./lib/paths.ts";
import { run } from "./lib/run.ts";

export type Report = (ok: boolean, name: string, detail?: string) => boolean;

/** A function whose configuration is refused ends with status 1 and the message, from either entry point. */
async function refusedConfigurationExits(report: Report): Promise<void> {
  const env = denoEnv({
    SUPABASE_DB_URL: "postgres://nobody@127.0.0.1:1/none",
    SUPABASE_JWT_SECRET: "s".repeat(32),
    TIDESYNC_CURSOR_SECRET: "c".repeat(32),
    TIDESYNC_DB_STATEMENT_TIMEOUT_MS: "3000000000",
    TIDESYNC_PORT: "1", // never reached: the configuration is read first
  });
  const entryPoints: [string, string[]][] = [
    ["scripts/serve-functions.ts (npm start, tests)", denoServeArgs()],
    ["functions/api/index.ts (deployed)", ["run", ...functionConfigArgs(), "--allow-net", "--allow-env", "--allow-read", path.join(ROOT, "functions/api/index.ts")]],
  ];
  for (const [name, args] of entryPoints) {
    const result = await run(DENO, args, { cwd: ROOT, env, timeoutMs: 60_000 });
    const said = /"level":"fatal".*TIDESYNC_DB_STATEMENT_TIMEOUT_MS must be a whole number/.test(result.stderr);
    report(result.code === 1 && said && !/kept serving/.test(result.stderr),
      `${name} with a refused setting ends with status 1 and says which`,
      `status ${result.code}\n${result.stderr.slice(0, 600)}`);
  }
}

export async function localStackChecks(report: Report): Promise<void> {
  await refusedConfigurationExits(report);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  let failed = 0;
  await localStackChecks((ok, name, detail) => {
    if (!ok) failed++;
    console.log(`${ok ? "ok  " : "FAIL"}  ${name}${!ok && detail ? `\n${detail.replace(/^/gm, "        ")}` : ""}`);
    return ok;
  });
  process.exit(failed === 0 ? 0 : 1);
}
