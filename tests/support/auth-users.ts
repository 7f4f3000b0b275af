// An auth.users row as Supabase Auth writes one for an email sign-up, on any
// connection (the shared test stack's or a test's own temporary database).
import type postgres from "postgres";

export interface AuthUserOptions {
  email?: string;
  isAnonymous?: boolean;
  /**
   * As if the user signed up before tidesync's migrations ran: created a day before the lists were made
   * syncable (app_private.sync_tables), with no trigger of ours run (no profile, no personal list). Needs a
   * connection that may set session_replication_role (a superuser's).
   */
  beforeTidesync?: boolean;
}

export async function insertAuthUser(sql: postgres.Sql, userId: string, options: AuthUserOptions = {}): Promise<string> {
  const email = options.email ?? `user-${userId.slice(0, 8)}@test.tidesync.dev`;
  const insert = (tx: postgres.Sql | postgres.TransactionSql) => tx`
    insert into auth.users (instance_id, id, aud, role, email, raw_app_meta_data, raw_user_meta_data, created_at, updated_at, is_anonymous)
    select '00000000-0000-0000-0000-000000000000', ${userId}, 'authenticated', 'authenticated', ${email},
           ${sql.json({ provider: "email", providers: ["email"] })}, ${sql.json({})}, at, at, ${options.isAnonymous ?? false}
      from (select ${options.beforeTidesync
        ? tx`(select t.created_at - interval '1 day' from app_private.sync_tables t where t.collection = 'lists')`
        : tx`now()`} as at) as created`;
  if (options.beforeTidesync) {
    await sql.begin(async (tx) => {
      await tx`set local session_replication_role = replica`;
      await insert(tx);
    });
  } else {
    await insert(sql);
  }
  return email;
}

/**
 * `count` such rows in ONE statement, emailed `<prefix>-<n>@…`: what importing
 * an existing user base does (each row's triggers run inside that statement).
 */
export async function insertAuthUsers(sql: postgres.ISql, count: number, emailPrefix: string): Promise<void> {
  await sql.unsafe(`
    insert into auth.users (instance_id, id, aud, role, email, raw_app_meta_data, raw_user_meta_data, created_at, updated_at, is_anonymous)
    select '00000000-0000-0000-0000-000000000000', gen_random_uuid(), 'authenticated', 'authenticated',
           $1 || '-' || g || '@import.tidesync.dev', '{"provider":"email","providers":["email"]}', '{}', now(), now(), false
      from generate_series(1, $2::integer) g`, [emailPrefix, count]);
}

/**
 * A new auth.sessions row for the user, as a sign-in makes one, and the claims PostgREST sets
 * for its access token (request.jwt.claims): the policies need the session to count
 * (app_private.live_uid(), migration 20261128001800).
 */
export async function signIn(sql: postgres.Sql, userId: string): Promise<string> {
  const [{ id }] = await sql<{ id: string }[]>`
    insert into auth.sessions (id, user_id, aal, created_at, updated_at, user_agent)
    values (gen_random_uuid(), ${userId}, 'aal1', now(), now(), 'tidesync tests')
    returning id`;
  return JSON.stringify({ sub: userId, role: "authenticated", session_id: id });
}
