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
  // Supabase Auth's users outlive a rollback of every migration: sample users kept through one got what
  // signup gives from the migrations, as any user from before them (their profile, 20261122020100; their
  // personal list, 20261128009700). A personal list deleted since comes back like any sample row, from
  // what signup calls (a sample task is in Bob's).
  const ids = fixture.users.map((u) => sqlLiteral(u.id)).join(", ");
  lines.push(
    "-- A sample user's personal list deleted since comes back, as a sign-up gives it.",
    `select app_private.create_personal_lists(array[${ids}]::uuid[]);`,
  );
  return lines.join("\n");
}
