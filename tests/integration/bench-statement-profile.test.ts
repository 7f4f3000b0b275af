// `npm run bench`'s statement-by-statement profile of a push
// (bench/time-breakdown.ts, pushStatementProfile) runs the real pushBatch
// through a wrapper of the transaction that times each statement: the wrapper
// must answer every statement as postgres.js does, `.execute()` included
// (pushBatch sends its set-up that way), or the bench stops at its breakdown.
import { randomUUID } from "node:crypto";
import postgres from "postgres";
import { afterAll, describe, expect, it } from "vitest";
import type { BenchStack } from "../../bench/bench-stack.ts";
import { pushStatementProfile } from "../../bench/time-breakdown.ts";
import { adminSql, createTestUser, stack } from "../support/harness.ts";

const ownerSql = postgres(stack.ownerDbUrl, { max: 1, onnotice: () => {} });
afterAll(() => ownerSql.end({ timeout: 5 }));

describe("the bench's push statement profile", () => {
  it("times pushBatch's statements and explains its write, read-back and ledger", async () => {
    const user = await createTestUser();
    const deviceId = randomUUID();
    await adminSql`
      insert into app_private.devices (user_id, installation_id, platform, app_version, build_number, session_id)
      values (${user.userId}, ${deviceId}, 'ios', '1.0.0', 1, ${user.sessionId})`;
    const steps = await pushStatementProfile({ ownerSql } as unknown as BenchStack, { ...user, deviceId, listId: user.userId }, 5);
    const names = steps.map((s) => s.step);
    expect(names[0]).toMatch(/pushBatch transaction, total/);
    expect(names.some((n) => /^ {2}pushBatch statement /.test(n))).toBe(true);
    for (const explained of ["sync_apply's insert into public.tasks", "the read-back of the written rows", "the ledger insert"]) {
      expect(names.some((n) => n.includes(explained))).toBe(true);
    }
    expect(steps.every((s) => Number.isFinite(s.ms) && s.ms >= 0)).toBe(true);
  });
});
