// What the test suite needs from the machine, checked up front so that a
// missing piece is reported as exactly that (and how to get it), not as a
// stack trace halfway through the run.
import { access } from "node:fs/promises";
import postgres from "postgres";
import { bin } from "./paths.ts";
import { run } from "./run.ts";
import { redactUrl } from "./redact.ts";

export interface Problem {
  missing: string;
  fix: string;
}


/** Postgres reachable as a superuser, and pgTAP available in it (when `needPgtap`). */
export async function checkPostgres(adminUrl: string, options: { needPgtap: boolean }): Promise<Problem[]> {
  const sql = postgres(adminUrl, { max: 1, connect_timeout: 5, onnotice: () => {} });
  try {
    const [row] = await sql<{ superuser: boolean; major: number; pgtap: boolean }[]>`
      select (select rolsuper from pg_roles where rolname = current_user) as superuser,
             current_setting('server_version_num')::int / 10000 as major,
             exists (select 1 from pg_available_extensions where name = 'pgtap') as pgtap`;
    const problems: Problem[] = [];
    if (!row.superuser) {
      problems.push({
        missing: `a superuser connection: ${redactUrl(adminUrl)} is not a superuser`,
        fix: "the suite creates and drops its own databases and applies the Supabase stand-in; set TEST_DATABASE_URL to a superuser URL (e.g. postgres://postgres@127.0.0.1:5432/postgres)",
      });
    }
    if (options.needPgtap && !row.pgtap) {
      problems.push({
        missing: `the pgTAP extension in Postgres ${row.major}`,
        fix: `sudo apt-get install postgresql-${row.major}-pgtap   (Debian/Ubuntu; elsewhere: https://pgtap.org)`,
      });
    }
    return problems;
  } catch (error) {
    return [{
      missing: `a reachable Postgres at ${redactUrl(adminUrl)} (${error instanceof Error ? error.message : String(error)})`,
      fix: "start Postgres 15 (Debian/Ubuntu: `sudo apt-get install postgresql-15 && sudo pg_ctlcluster 15 main start`) " +
        "or set TEST_DATABASE_URL to a superuser connection URL",
    }];
  } finally {
    await sql.end({ timeout: 1 }).catch(() => {});
  }
}

export async function checkPgProve(): Promise<Problem[]> {
  const result = await run("pg_prove", ["--version"]).catch(() => undefined);
  if (result && result.code === 0) return [];
  return [{
    missing: "pg_prove (runs the pgTAP files)",
    fix: "sudo apt-get install libtap-parser-sourcehandler-pgtap-perl   (Debian/Ubuntu; elsewhere: cpan TAP::Parser::SourceHandler::pgTAP)",
  }];
}

/** The pinned tools npm installs (supabase CLI, deno, vitest, tsc). */
export async function checkNodeTools(names: string[]): Promise<Problem[]> {
  const problems: Problem[] = [];
  for (const name of names) {
    try {
      await access(bin(name));
    } catch {
      problems.push({ missing: `node_modules/.bin/${name}`, fix: "npm ci   (installs the pinned supabase CLI, deno, vitest, typescript)" });
    }
  }
  return problems;
}

/** Prints the problems; true when there are none. */
export function reportProblems(problems: Problem[]): boolean {
  if (problems.length === 0) return true;
  console.error("\nMissing prerequisites:");
  for (const problem of problems) {
    console.error(`  ✗ ${problem.missing}\n      fix: ${problem.fix}`);
  }
  console.error("");
  return false;
}
