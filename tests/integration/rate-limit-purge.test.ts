// The rate-limit counters do not grow without bound: the purge (run by the
// service role, e.g. on a schedule) deletes windows that ended over a day ago,
// in bounded batches, through the window_start index.
import { describe, expect, it } from "vitest";
import { adminSql, createTestUser } from "../support/harness.ts";

describe("app_private.purge_rate_limit_counters", () => {
  it("deletes only counters older than a day, at most p_batch per call, through its index", async () => {
    const user = await createTestUser();
    // A reference time in the past: every counter other tests write now is newer, so only ours can qualify.
    const reference = new Date("2001-06-01T12:00:00Z");
    const at = (hoursBefore: number) => new Date(reference.getTime() - hoursBefore * 3_600_000);
    await adminSql`
      insert into app_private.rate_limit_counters (user_id, operation, window_start, hits)
      values (${user.userId}, 'purge.test', ${at(72)}, 1), (${user.userId}, 'purge.test', ${at(48)}, 2),
             (${user.userId}, 'purge.test', ${at(25)}, 3), (${user.userId}, 'purge.test', ${at(2)}, 4)`;

    const purged = await adminSql.begin(async (tx) => {
      await tx`set local role service_role`;
      // The planner would scan a tiny table sequentially; at production size
      // the index is the plan. Forbid the scan to show the index serves the query.
      await tx`set local enable_seqscan = off`;
      const plan = await tx.unsafe(`explain select 1 from app_private.rate_limit_counters where window_start < $1::timestamptz - interval '1 day' limit 2`, [reference]);
      expect(plan.map((r) => String(r["QUERY PLAN"])).join("\n")).toMatch(/rate_limit_counters_window_start_idx/);
      const [first] = await tx<{ n: number }[]>`select app_private.purge_rate_limit_counters(${reference}, 2) as n`;
      const [second] = await tx<{ n: number }[]>`select app_private.purge_rate_limit_counters(${reference}, 2) as n`;
      return [first.n, second.n];
    });
    expect(purged).toEqual([2, 1]);

    const left = await adminSql<{ hits: number }[]>`
      select hits from app_private.rate_limit_counters where user_id = ${user.userId} and operation = 'purge.test' order by hits`;
    expect(left.map((r) => r.hits)).toEqual([4]);
  });

  it("is not callable by users", async () => {
    const [row] = await adminSql<{ anon: boolean; authenticated: boolean; service: boolean }[]>`
      select has_function_privilege('anon', 'app_private.purge_rate_limit_counters(timestamptz, integer)', 'execute') as anon,
             has_function_privilege('authenticated', 'app_private.purge_rate_limit_counters(timestamptz, integer)', 'execute') as authenticated,
             has_function_privilege('service_role', 'app_private.purge_rate_limit_counters(timestamptz, integer)', 'execute') as service`;
    expect(row).toEqual({ anon: false, authenticated: false, service: true });
  });
});
