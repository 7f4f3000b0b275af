// A push's first statement waits for the user's other pushes (a transaction-level advisory lock,
// push-store.ts step 0) before it locks any row it names. postgres.js sends a query when it is
// first awaited, and the row locks were awaited as they were made, the set-up only later: a push
// waiting its turn held its rows meanwhile, so the running push, touching one of them beyond what
// it had locked (a list delete's cascade), deadlocked with it, and the lock statements ran without
// the set-up's plan settings. Made with a held advisory lock, not by luck.
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { syncBatchResponseSchema } from "../../functions/_shared/schemas/sync.ts";
import { adminSql, createTestUser } from "../support/harness.ts";
import { holdTransaction, waitersOf } from "../support/held-transactions.ts";
import { push, pushOk, upsert } from "../support/shared-lists.ts";

describe("a push waiting for the user's other push", () => {
  it("holds none of the rows it names until its turn comes", async () => {
    const alice = await createTestUser();
    const list = randomUUID();
    const task = randomUUID();
    const { results } = await pushOk(alice, { ops: [upsert("lists", list, { title: "Mine" }), upsert("tasks", task, { list_id: list, title: "before" })] });
    const version = results[1].record!.version;

    // Alice's other push, still running: its turn is the advisory lock.
    const running = holdTransaction((tx) => tx`select pg_advisory_xact_lock(hashtextextended(${"tidesync.push " + alice.userId}, 0))`);
    await running.ran;
    const waiting = push(alice, { ops: [upsert("tasks", task, { title: "after" }, version)] });
    await waitersOf(await running.pid, 1);

    // The task is free: the waiting push has locked nothing yet.
    const locked = await adminSql.begin(async (tx) => {
      const rows = await tx`select id from public.tasks where id = ${task} for update nowait`;
      return rows.length;
    }).catch((error: { code?: string }) => error.code);
    expect(locked).toBe(1);

    running.commit();
    await running.done;
    const response = await waiting;
    expect(response.status, response.text).toBe(200);
    expect(syncBatchResponseSchema.parse(response.body).results.map((r) => r.status)).toEqual(["applied"]);
  });
});
