// withUser (functions/api/lib/db.ts) pipelines the session check with the
// work's first statements (one round trip). What a user would notice if that
// went wrong: a signed-out session still writing. With a live session the
// work's writes are kept; with a signed-out one the answer is 401, the
// statement that travelled with the check leaves nothing behind, and the work
// cannot start another statement. The admission statement (rate-limit.ts)
// checks the session once, however often it reads the standing.
import { randomUUID } from "node:crypto";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiError } from "../../functions/_shared/errors.ts";
import type { Config } from "../../functions/api/lib/config.ts";
import { createDb, type Db, type Sql } from "../../functions/api/lib/db.ts";
import { consumeRateLimit } from "../../functions/api/lib/rate-limit.ts";
import type { UserClaims } from "../../functions/api/lib/verify-token.ts";
import { createTempDatabase, type TempDatabase } from "../../scripts/lib/temp-database.ts";
import { insertAuthUser } from "../support/auth-users.ts";

let database: TempDatabase;
let admin: postgres.Sql;
let db: Db;

async function signedInUser(): Promise<UserClaims> {
  const userId = randomUUID();
  const sessionId = randomUUID();
  await insertAuthUser(admin, userId);
  await admin`insert into auth.sessions (id, user_id, aal, created_at, updated_at) values (${sessionId}, ${userId}, 'aal1', now(), now())`;
  return { sub: userId, session_id: sessionId, role: "authenticated" };
}

const listsTitled = async (title: string) => (await admin<{ n: number }[]>`select count(*)::int as n from public.lists where title = ${title}`)[0].n;

beforeAll(async () => {
  database = await createTempDatabase("tidesync_withuser", { seed: false });
  admin = postgres(database.adminDbUrl, { max: 1, onnotice: () => {} });
  db = createDb({ dbUrl: database.ownerDbUrl, db: { poolMax: 2, connectTimeoutSeconds: 10, statementTimeoutMs: 10_000, prepare: true } } as Config);
});

afterAll(async () => {
  await db?.close();
  await admin?.end({ timeout: 5 });
  await database?.drop();
});

describe("withUser: the session check travels with the work's first statements", () => {
  it("a live session: the work runs as the caller and its writes are kept", async () => {
    const claims = await signedInUser();
    const title = `kept ${randomUUID()}`;
    const owner = await db.withUser(claims, async (tx) => {
      await tx`insert into public.lists (title) values (${title})`;
      const [row] = await tx<{ created_by: string }[]>`select created_by::text from public.lists where title = ${title}`;
      return row.created_by;
    });
    expect(owner).toBe(claims.sub);
    expect(await listsTitled(title)).toBe(1);
  });

  it("a signed-out session: 401, the pipelined write is rolled back, no further statement starts", async () => {
    const claims = await signedInUser();
    await admin`delete from auth.sessions where id = ${claims.session_id}::uuid`;
    const title = `dropped ${randomUUID()}`;
    let secondStatement: unknown = "not attempted";
    const outcome = db.withUser(claims, async (tx) => {
      await tx`insert into public.lists (title) values (${title})`;
      try {
        await tx`insert into public.lists (title) values (${`${title} again`})`;
        secondStatement = "ran";
      } catch (error) {
        secondStatement = error;
      }
      return "answered";
    });
    await expect(outcome).rejects.toMatchObject({ code: "UNAUTHENTICATED" });
    // Refused (pipelined work is stopped at its next statement), never run.
    expect(secondStatement === "not attempted" || secondStatement instanceof ApiError).toBe(true);
    expect(secondStatement).not.toBe("ran");
    expect(await listsTitled(title)).toBe(0);
    expect(await listsTitled(`${title} again`)).toBe(0);
  });
});

describe("the admission statement (consumeRateLimit)", () => {
  it("calls app_private.session_standing once: its subquery is not flattened into each use of the standing", async () => {
    const claims = await signedInUser();
    let calls: number | undefined;
    // A Db whose one statement runs in a transaction that counts its function calls.
    const counting = {
      query: (work: (sql: Sql) => Promise<unknown>) => admin.begin(async (tx) => {
        await tx`set local track_functions = 'all'`;
        const result = await work(tx as unknown as Sql);
        [{ calls }] = await tx<{ calls: number }[]>`
          select coalesce(sum(calls), 0)::int as calls from pg_stat_xact_user_functions
          where schemaname = 'app_private' and funcname = 'session_standing'`;
        return result;
      }),
    } as unknown as Db;
    await consumeRateLimit(counting, claims, "tidesync_test_admission", { limit: 10, window_seconds: 60, per: "session" });
    expect(calls).toBe(1);
  });
});
