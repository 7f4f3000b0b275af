// Race tests without luck: one side's transaction is held open at a chosen
// point while the other side runs, and the test sees the other side wait for
// it (pg_blocking_pids) before it lets the first commit.
import postgres from "postgres";
import { afterAll } from "vitest";
import { adminSql, stack } from "./harness.ts";

/** Own pool: a held transaction keeps its connection while the test's other statements run. */
const holders = postgres(stack.adminDbUrl, { max: 4, onnotice: () => {} });
afterAll(async () => {
  await holders.end({ timeout: 5 });
});

export type Isolation = "read committed" | "repeatable read";

export interface HeldTransaction {
  /** The transaction's backend, to see who waits for it. */
  pid: Promise<number>;
  /** Settles once `statement` has run (the transaction is still open). */
  ran: Promise<void>;
  /** Settles when the transaction has committed (or been rolled back by `rollBack()`), or rejects with its error. */
  done: Promise<void>;
  commit(): void;
  /** Ends it without keeping anything (a row it inserted only held a key meanwhile). */
  rollBack(): void;
}

const ROLLED_BACK = new Error("rolled back by the test");

/**
 * Runs `statement` in a transaction of its own and keeps it open until
 * `commit()`: as `as` (role authenticated with their claims, as PostgREST and
 * the api function run a user's work) when given, else as the superuser.
 */
export function holdTransaction(
  statement: (tx: postgres.TransactionSql) => Promise<unknown>,
  /** `db`: the pool to hold it on (another database's, a probe stack's; default the test stack's). */
  options: { as?: { userId: string; sessionId: string }; isolation?: Isolation; db?: postgres.Sql } = {},
): HeldTransaction {
  let end!: (keep: boolean) => void;
  const release = new Promise<boolean>((resolve) => (end = resolve));
  let started!: (pid: number) => void;
  const pid = new Promise<number>((resolve) => (started = resolve));
  let finished!: () => void;
  const ran = new Promise<void>((resolve) => (finished = resolve));
  const user = options.as;
  const done = (options.db ?? holders).begin(`isolation level ${options.isolation ?? "read committed"}`, async (tx) => {
    const [row] = user
      ? await tx<{ pid: number }[]>`
          select pg_backend_pid() as pid,
                 set_config('request.jwt.claims', ${JSON.stringify({ sub: user.userId, role: "authenticated", session_id: user.sessionId })}, true),
                 set_config('role', 'authenticated', true)`
      : await tx<{ pid: number }[]>`select pg_backend_pid() as pid`;
    started(row.pid);
    await statement(tx);
    finished();
    if (!(await release)) throw ROLLED_BACK;
  }).then(() => {}, (error) => {
    if (error !== ROLLED_BACK) throw error;
  });
  done.catch(() => {}); // asserted by the test
  return { done, commit: () => end(true), rollBack: () => end(false), pid, ran };
}

/**
 * Resolves once `count` backends wait for the transaction of backend `pid`,
 * directly or behind one another (other test files' backends never do; the
 * backends of every database of the cluster are seen, a probe stack's too).
 * Throws when that transaction has ended first, or after `timeoutMs` (a
 * deadline, not a number of polls: on a loaded machine the waiter, a request
 * through the function or an RLS-heavy statement, may take seconds to reach the
 * lock). Raced against the waiter's own answer, it stops once the test ends the
 * transaction.
 */
export async function waitersOf(pid: number, count = 1, timeoutMs = 30_000): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; ;) {
    const [row] = await adminSql<{ waiting: number; open: boolean }[]>`
      with recursive waiting (pid) as (
        select a.pid from pg_stat_activity a where ${pid}::int = any (pg_blocking_pids(a.pid))
        union
        select a.pid from pg_stat_activity a join waiting w on w.pid = any (pg_blocking_pids(a.pid))
      )
      select (select count(*)::int from waiting) as waiting,
             exists (select 1 from pg_stat_activity where pid = ${pid}::int and xact_start is not null) as open`;
    if (row.waiting >= count) return;
    if (!row.open) throw new Error(`the transaction of backend ${pid} ended before ${count} backends waited for it`);
    if (Date.now() > deadline) throw new Error(`fewer than ${count} backends waited for backend ${pid} within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
