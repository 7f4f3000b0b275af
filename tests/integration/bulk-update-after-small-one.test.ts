// A bulk update of a synced table on a connection that earlier ran a small one (a one-row edit
// through the Data API, a one-op push: PostgREST and the function keep their connections) pairs
// its rows' old and new versions once each, not every new row with every old one. A plpgsql
// statement keeps the transition tables' sizes of its first call on the connection, so the
// sync trigger's pairing join stayed planned for one row: a 10,000-row "mark all done" took
// ~18 s there against 0.4 s on a fresh connection (migration 20261128008700). Counted from the
// plans Postgres ran (how often a transition table was scanned), never by time.
import postgres from "postgres";
import { afterAll, expect, it } from "vitest";
import { adminSql, createTestUser, stack } from "../support/harness.ts";
import { seedListOfTasks } from "../support/big-list.ts";
import { allNodes, inRolledBackTransaction, planRecorder } from "../support/explained.ts";

const { onnotice, explainEach } = planRecorder();
const connection = postgres(stack.adminDbUrl, { max: 1, onnotice });
afterAll(() => connection.end({ timeout: 5 }));

const ROWS = 2_000;

it("scans each transition table once, whatever the connection's first update was", { timeout: 120_000 }, async () => {
  const owner = await createTestUser();
  const small = await seedListOfTasks(owner.userId, 1);
  const big = await seedListOfTasks(owner.userId, ROWS);
  // The connection's first update is of one row (re-planning later does not forget its size).
  await connection`update public.tasks set done = not done where list_id = ${small}`;

  await inRolledBackTransaction(connection, async (tx) => {
    const plans = await explainEach(tx, true, () => tx`update public.tasks set done = not done where list_id = ${big}`);
    const scans = plans.flatMap((p) => allNodes(p.Plan).filter((n) => n["Node Type"] === "Named Tuplestore Scan")
      .map((n) => ({ statement: p["Query Text"].trim().slice(0, 60), loops: n["Actual Loops"] ?? 1 })));
    expect(scans.length).toBeGreaterThan(0);
    expect(scans.filter((s) => s.loops > 1)).toEqual([]);
  });
  // The update itself was kept out (rolled back); done once more, every row is recorded as changed.
  await connection`update public.tasks set done = not done where list_id = ${big}`;
  const [{ bumped }] = await adminSql<{ bumped: number }[]>`
    select count(*)::int as bumped from app_private.sync_records s join public.tasks t on t.id = s.id
     where s.collection = 'tasks' and t.list_id = ${big} and s.field_versions ? 'done'`;
  expect(bumped).toBe(ROWS);
});
