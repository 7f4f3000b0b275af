// The append-only rule for migrations: a migration file that exists in a
// commit on the main line is never modified, renamed or deleted afterwards;
// a change of schema is a new migration. supabase/migrations-baseline holds
// the commit from which the rule holds (the lead moves it after an agreed
// fold of migrations before a release).
import { readFile } from "node:fs/promises";
import path from "node:path";
import { run } from "../lib/run.ts";

export const MIGRATIONS_DIR = "supabase/migrations";
export const BASELINE_FILE = "supabase/migrations-baseline";

export interface GitChanges {
  /** `git log --first-parent --diff-filter=MDR --name-status --format= <baseline>..HEAD -- supabase/migrations` (the main line: a side branch's own history is judged by its merge) */
  committed: string;
  /** `git diff HEAD --diff-filter=MDR --name-status -- supabase/migrations` */
  uncommitted: string;
}

const VERB: Record<string, string> = { M: "modified", D: "deleted", R: "renamed" };

function violationsIn(nameStatus: string, where: string): string[] {
  const found: string[] = [];
  for (const line of nameStatus.split("\n")) {
    if (!line.trim()) continue;
    const [status, ...paths] = line.split("\t");
    const verb = VERB[status[0]];
    if (!verb) continue; // additions (and anything else) are allowed
    const file = paths[0];
    if (!file?.startsWith(MIGRATIONS_DIR + "/")) continue;
    const target = status[0] === "R" && paths[1] ? ` to ${paths[1]}` : "";
    found.push(`${file} was ${verb}${target} ${where}`);
  }
  return found;
}

/** Every breach of the rule, as a sentence; none means the migrations are append-only. */
export function appendOnlyViolations(changes: GitChanges): string[] {
  return [...new Set([
    ...violationsIn(changes.committed, "in a commit after the baseline"),
    ...violationsIn(changes.uncommitted, "in the working tree"),
  ])];
}

export type GuardResult = { status: "skipped"; reason: string } | { status: "checked"; baseline: string; violations: string[] };

async function git(root: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return await run("git", args, { cwd: root }).catch((error) => ({ code: 127, stdout: "", stderr: String(error) }));
}

/** Runs the rule on the checkout at `root` (skipped, with the reason, outside a git checkout). */
export async function checkAppendOnly(root: string): Promise<GuardResult> {
  const inside = await git(root, ["rev-parse", "--is-inside-work-tree"]);
  if (inside.code !== 0 || inside.stdout.trim() !== "true") {
    return { status: "skipped", reason: `not a git checkout (${(inside.stderr || inside.stdout).trim().split("\n")[0]})` };
  }
  const baseline = (await readFile(path.join(root, BASELINE_FILE), "utf8")).trim();
  if (!/^[0-9a-f]{40}$/.test(baseline)) throw new Error(`${BASELINE_FILE} must hold one full commit sha, got ${JSON.stringify(baseline)}`);
  if ((await git(root, ["cat-file", "-e", `${baseline}^{commit}`])).code !== 0) {
    throw new Error(`the baseline commit ${baseline} (${BASELINE_FILE}) is not in this clone's history; fetch the full history`);
  }
  const committed = await git(root, ["log", "--first-parent", "--diff-filter=MDR", "--name-status", "--format=", `${baseline}..HEAD`, "--", MIGRATIONS_DIR]);
  const uncommitted = await git(root, ["diff", "HEAD", "--diff-filter=MDR", "--name-status", "--", MIGRATIONS_DIR]);
  for (const result of [committed, uncommitted]) if (result.code !== 0) throw new Error(`git failed: ${result.stderr}`);
  return { status: "checked", baseline, violations: appendOnlyViolations({ committed: committed.stdout, uncommitted: uncommitted.stdout }) };
}
