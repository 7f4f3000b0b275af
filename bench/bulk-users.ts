// `npm run bench:bulk`: a bulk import of users into a fresh project (one
// INSERT into auth.users, as importing an existing user base does; each new
// user's profile, personal list and membership come from per-row triggers, so
// the sync triggers run once per statement, thousands of times in one
// transaction), then a bulk delete of them (one DELETE), each user with a
// device whose row id stamps a record that outlives them (the
// delete of their devices queues it, migration 20261127002200), then the pass that
// forgets the queued ids (app_private.forget_queued_installations). Per user, at two
// sizes side by side, each on a fresh database: a ratio near 1× is linear, 4×
// (for 4× the users) quadratic, which both were before migration
// 20261126000500 (docs/performance-history.md, "2026-11-26 (late morning)").
import { insertAuthUsers } from "../tests/support/auth-users.ts";
import { startBenchStack } from "./bench-stack.ts";
import { now, round } from "./measure.ts";

const SIZES = (process.env.BENCH_BULK_USERS ?? "2000,8000").split(",").map(Number);
if (SIZES.length !== 2 || SIZES.some((n) => !Number.isSafeInteger(n) || n <= 0)) {
  console.error("BENCH_BULK_USERS must be two positive integers, e.g. 2000,8000");
  process.exit(2);
}

interface BulkResult {
  users: number;
  importMsPerUser: number;
  deleteMsPerUser: number;
  forgetMsPerUser: number;
}

async function measure(users: number): Promise<BulkResult> {
  const stack = await startBenchStack(() => {});
  try {
    const started = now();
    await insertAuthUsers(stack.adminSql, users, "bulk");
    const imported = now();
    await stack.adminSql.unsafe(`
      with d as (
        insert into app_private.devices (user_id, installation_id, platform, app_version, build_number, last_seen_at, revoked_at)
        select id, gen_random_uuid(), 'ios', '1.0.0', 1, now(), now() from auth.users where email like 'bulk-%'
        returning id)
      insert into app_private.sync_records (collection, id, scope_id, version, field_versions)
      select 'tasks', gen_random_uuid(), gen_random_uuid(), 1, jsonb_build_object('*', jsonb_build_object('v', 1, 'd', d.id)) from d`);
    const stamped = now();
    await stack.adminSql.unsafe(`delete from auth.users where email like 'bulk-%'`);
    const deleted = now();
    await stack.adminSql.unsafe(`select app_private.forget_queued_installations()`);
    const forgotten = now();
    return {
      users,
      importMsPerUser: (imported - started) / users,
      deleteMsPerUser: (deleted - stamped) / users,
      forgetMsPerUser: (forgotten - deleted) / users,
    };
  } finally {
    await stack.stop();
  }
}

const [small, large] = [await measure(SIZES[0]), await measure(SIZES[1])];
const row = (label: string, key: "importMsPerUser" | "deleteMsPerUser" | "forgetMsPerUser") =>
  `| ${label} | ${round(small[key], 3)} | ${round(large[key], 3)} | ${round(large[key] / small[key], 2)}× |`;
console.log([
  `bulk users in one statement, each size on a fresh database (ms per user; linear: ~1×, quadratic: ~${round(large.users / small.users, 1)}×)`,
  `| statement | ${small.users.toLocaleString("en-US")} users | ${large.users.toLocaleString("en-US")} users | ratio |`,
  "|---|---|---|---|",
  row("INSERT into auth.users (import)", "importMsPerUser"),
  row("DELETE from auth.users", "deleteMsPerUser"),
  row("forget_queued_installations() (one pass)", "forgetMsPerUser"),
].join("\n"));
process.exit(0);
