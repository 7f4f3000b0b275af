// RLS overhead: one pull-page statement walking the caller's tasks, run as
// `authenticated` with the request's JWT claims (the tables' policies add
// their conditions: tasks of the caller's lists, sync state of visible
// scopes) and as the owner role, which bypasses RLS. The statement is the
// raw-SQL pull floor's (FLOOR_PAGE_SQL), with the caller's lists named
// explicitly, so both sides read the same rows with the same text and only the
// policies differ. (The function's own statement cannot run as the owner: it
// asks the policies which scopes the caller sees, and the owner sees them all.)
import type { BenchStack, BenchUser } from "./bench-stack.ts";
import { median, now } from "./measure.ts";
import { FLOOR_PAGE_SQL, floorPage, ZERO_UUID } from "./pull-throughput.ts";

export interface RlsResult {
  pages: number;
  authenticatedSeconds: number;
  ownerSeconds: number;
  ratio: number;
  /** Postgres' own execution time of one mid-walk page (EXPLAIN ANALYZE), ms. */
  explainMs: { authenticated: number; owner: number };
  /** Its planning time (EXPLAIN ANALYZE), ms: the policies are planned into the statement. */
  planningMs: { authenticated: number; owner: number };
}

function claimsOf(user: BenchUser): string {
  return JSON.stringify({ sub: user.userId, role: "authenticated", session_id: user.sessionId, aud: "authenticated" });
}

const OWNER_ROLE = "tidesync_owner";

async function walk(stack: BenchStack, user: BenchUser, pageSize: number, asAuthenticated: boolean): Promise<{ pages: number; midId: string }> {
  let afterId = ZERO_UUID;
  const lastIds: string[] = [];
  for (;;) {
    const page = await stack.ownerSql.begin(async (tx) => {
      await tx`select set_config('request.jwt.claims', ${claimsOf(user)}, true), set_config('role', ${asAuthenticated ? "authenticated" : OWNER_ROLE}, true)`;
      return await floorPage(tx, [user.listId], afterId, pageSize);
    });
    const last = page.records.at(-1);
    if (last) lastIds.push(last.id);
    if (page.records.length < pageSize || !last) break;
    afterId = last.id;
  }
  return { pages: lastIds.length, midId: lastIds[Math.floor(lastIds.length / 2)] ?? ZERO_UUID };
}

async function explainMs(stack: BenchStack, user: BenchUser, pageSize: number, afterId: string, asAuthenticated: boolean): Promise<{ execution: number; planning: number }> {
  return await stack.ownerSql.begin(async (tx) => {
    await tx`select set_config('request.jwt.claims', ${claimsOf(user)}, true), set_config('role', ${asAuthenticated ? "authenticated" : OWNER_ROLE}, true)`;
    const execution: number[] = [];
    const planning: number[] = [];
    for (let i = 0; i < 5; i++) {
      const rows = await tx.unsafe<{ "QUERY PLAN": { "Execution Time": number; "Planning Time": number }[] }[]>(`explain (analyze, format json) ${FLOOR_PAGE_SQL}`, [[user.listId], afterId, pageSize]);
      execution.push(rows[0]["QUERY PLAN"][0]["Execution Time"]);
      planning.push(rows[0]["QUERY PLAN"][0]["Planning Time"]);
    }
    return { execution: median(execution), planning: median(planning) };
  });
}

export async function measureRlsOverhead(stack: BenchStack, user: BenchUser, pageSize: number, repeats: number): Promise<RlsResult> {
  await walk(stack, user, pageSize, true);
  const { midId } = await walk(stack, user, pageSize, false);
  const authenticated: number[] = [];
  const owner: number[] = [];
  let pages = 0;
  for (let i = 0; i < repeats; i++) {
    // Alternate the order so caches and background noise favour neither side.
    for (const asAuthenticated of i % 2 === 0 ? [true, false] : [false, true]) {
      const started = now();
      pages = (await walk(stack, user, pageSize, asAuthenticated)).pages;
      (asAuthenticated ? authenticated : owner).push((now() - started) / 1000);
    }
  }
  const authenticatedSeconds = median(authenticated);
  const ownerSeconds = median(owner);
  const authenticatedPlan = await explainMs(stack, user, pageSize, midId, true);
  const ownerPlan = await explainMs(stack, user, pageSize, midId, false);
  return {
    pages,
    authenticatedSeconds,
    ownerSeconds,
    ratio: authenticatedSeconds / ownerSeconds,
    explainMs: { authenticated: authenticatedPlan.execution, owner: ownerPlan.execution },
    planningMs: { authenticated: authenticatedPlan.planning, owner: ownerPlan.planning },
  };
}
