// RLS overhead: the pull's own SQL (readChangesPage from the function) walking
// the same pages twice per repeat — as `authenticated` with the request's JWT
// claims, the way the function runs it, and as the owner role, which bypasses
// RLS. Both run in a transaction with the same statements (claims are set on
// both sides; only the role switch differs), so the ratio is what the policies
// cost.
import { readChangesPage } from "../functions/api/sync/pull-store.ts";
import type { BenchStack, BenchUser } from "./bench-stack.ts";
import { median, now } from "./measure.ts";

export interface RlsResult {
  pages: number;
  authenticatedSeconds: number;
  ownerSeconds: number;
  ratio: number;
  /** Postgres' own execution time of one mid-walk page (EXPLAIN ANALYZE), ms. */
  explainMs: { authenticated: number; owner: number };
}

async function walk(stack: BenchStack, user: BenchUser, pageSize: number, asAuthenticated: boolean): Promise<number> {
  const claims = JSON.stringify({ sub: user.userId, role: "authenticated", session_id: user.sessionId, aud: "authenticated" });
  let afterSeq = 0;
  let pages = 0;
  for (;;) {
    const page = await stack.ownerSql.begin(async (tx) => {
      await tx`select set_config('request.jwt.claims', ${claims}, true), set_config('role', ${asAuthenticated ? "authenticated" : "tidesync_owner"}, true)`;
      return await readChangesPage(tx, { userId: user.userId, afterSeq, tombstoneFloor: null, collections: null, limit: pageSize });
    });
    pages += 1;
    JSON.parse(page.changesJson);
    if (!page.hasMore || page.lastPageSeq === null) break;
    afterSeq = page.lastPageSeq;
  }
  return pages;
}

async function explainMs(stack: BenchStack, user: BenchUser, pageSize: number, afterSeq: number, asAuthenticated: boolean): Promise<number> {
  const claims = JSON.stringify({ sub: user.userId, role: "authenticated", session_id: user.sessionId });
  return await stack.ownerSql.begin(async (tx) => {
    await tx`select set_config('request.jwt.claims', ${claims}, true), set_config('role', ${asAuthenticated ? "authenticated" : "tidesync_owner"}, true)`;
    const times: number[] = [];
    for (let i = 0; i < 5; i++) {
      const rows = await tx.unsafe<{ "QUERY PLAN": { "Execution Time": number }[] }[]>(
        `explain (analyze, format json)
         select json_agg(json_build_object('collection', p.collection, 'id', p.id, 'version', p.version, 'deleted', p.deleted, 'data', p.data) order by p.change_seq)::text
           from (select r.* from app_private.records r
                  where r.user_id = $1::uuid and r.change_seq > $2::bigint
                  order by r.change_seq limit $3) p`,
        [user.userId, afterSeq, pageSize],
      );
      times.push(rows[0]["QUERY PLAN"][0]["Execution Time"]);
    }
    return median(times);
  });
}

export async function measureRlsOverhead(stack: BenchStack, user: BenchUser, pageSize: number, repeats: number): Promise<RlsResult> {
  await walk(stack, user, pageSize, true);
  await walk(stack, user, pageSize, false);
  const authenticated: number[] = [];
  const owner: number[] = [];
  let pages = 0;
  for (let i = 0; i < repeats; i++) {
    // Alternate the order so caches and background noise favour neither side.
    for (const asAuthenticated of i % 2 === 0 ? [true, false] : [false, true]) {
      const started = now();
      pages = await walk(stack, user, pageSize, asAuthenticated);
      (asAuthenticated ? authenticated : owner).push((now() - started) / 1000);
    }
  }
  const authenticatedSeconds = median(authenticated);
  const ownerSeconds = median(owner);
  const midSeq = Math.floor((pages * pageSize) / 2);
  return {
    pages,
    authenticatedSeconds,
    ownerSeconds,
    ratio: authenticatedSeconds / ownerSeconds,
    explainMs: {
      authenticated: await explainMs(stack, user, pageSize, midSeq, true),
      owner: await explainMs(stack, user, pageSize, midSeq, false),
    },
  };
}
