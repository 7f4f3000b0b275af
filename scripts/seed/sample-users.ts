// Seed section: the sample users in auth.users and one live auth.sessions row
// each, so that the dev tokens `npm start` prints are bound to a real session.
import { z } from "zod";
import { readFixture, sqlLiteral } from "./seed-sql.ts";
import { uuidSchema } from "../../functions/_shared/uuid.ts";

export const sampleUsersSchema = z.object({
  _label: z.string().includes("SAMPLE"),
  password: z.string(),
  password_bcrypt: z.string(),
  created_at: z.string(),
  users: z.array(z.object({
    id: uuidSchema,
    email: z.email(),
    display_name: z.string(),
    session_id: uuidSchema,
  })),
});
export type SampleUsers = z.infer<typeof sampleUsersSchema>;

export async function loadSampleUsers(): Promise<SampleUsers> {
  return sampleUsersSchema.parse(await readFixture("sample-users.json"));
}

export async function sampleUsersSql(): Promise<string> {
  const fixture = await loadSampleUsers();
  const at = sqlLiteral(fixture.created_at);
  const lines = ["-- Sample users (fixtures/sample-users.json). SAMPLE DATA: not real people."];
  for (const u of fixture.users) {
    const userMeta = JSON.stringify({ display_name: u.display_name, sample: true });
    const appMeta = JSON.stringify({ provider: "email", providers: ["email"], sample: true });
    lines.push(
      // The token columns '' as Supabase Auth writes them: it reads them as strings, and a NULL
      // makes its sign-in of the user fail (supabase/auth#1940).
      `insert into auth.users (instance_id, id, aud, role, email, encrypted_password, email_confirmed_at, raw_app_meta_data, raw_user_meta_data, created_at, updated_at, is_anonymous,`,
      `                        confirmation_token, recovery_token, email_change_token_new, email_change)`,
      `values ('00000000-0000-0000-0000-000000000000', ${sqlLiteral(u.id)}, 'authenticated', 'authenticated', ${sqlLiteral(u.email)}, ${sqlLiteral(fixture.password_bcrypt)}, ${at}, ${sqlLiteral(appMeta)}::jsonb, ${sqlLiteral(userMeta)}::jsonb, ${at}, ${at}, false,`,
      `        '', '', '', '')`,
      `on conflict (id) do nothing;`,
      `insert into auth.sessions (id, user_id, aal, created_at, updated_at, user_agent)`,
      `values (${sqlLiteral(u.session_id)}, ${sqlLiteral(u.id)}, 'aal1', ${at}, ${at}, 'sample session (tidesync seed)')`,
      `on conflict (id) do nothing;`,
    );
  }
  // Supabase Auth's users outlive a rollback of every migration: a sample user
  // already in auth.users missed what signup's triggers give a new one, its
  // personal list (app_private.create_personal_list_for_new_user) and profile
  // (app_private.create_profile_for_new_user), which the rows below need.
  const ids = fixture.users.map((u) => sqlLiteral(u.id)).join(", ");
  lines.push(
    "-- Sample users that were in auth.users before the schema (kept through a rollback) get what signup gives.",
    `insert into public.lists (id, title, created_by) select u.id, 'Personal', u.id from auth.users u where u.id in (${ids})`,
    `on conflict (id) do nothing;`,
    `insert into public.profiles (id, display_name, created_at, updated_at)`,
    `select u.id, app_private.display_name_from_user_metadata(u.raw_user_meta_data), coalesce(u.created_at, now()), coalesce(u.created_at, now()) from auth.users u where u.id in (${ids})`,
    `on conflict (id) do nothing;`,
  );
  return lines.join("\n");
}
