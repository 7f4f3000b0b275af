// A type-level test, compiled by `npm run typecheck` and never run: the
// generated supabase/types/database.ts lets supabase-js write only what the
// `authenticated` role holds INSERT / UPDATE privilege on, so a write the
// database refuses (42501 permission denied) does not compile. Each
// `@ts-expect-error` fails the typecheck when the line below it compiles.
import type { SupabaseClient } from "@supabase/supabase-js";
import type { Database, Tables } from "../../supabase/types/database.ts";

export function writesTheDatabaseAccepts(db: SupabaseClient<Database>, listId: string, userId: string): void {
  db.from("tasks").insert({ list_id: listId, title: "Milk", notes: null, done: false, position: 1, due_date: null });
  db.from("tasks").update({ title: "Oat milk", done: true, list_id: listId });
  db.from("lists").insert({ title: "Groceries", color: "#00ff00", archived: false, position: 0 });
  db.from("lists").update({ title: "Shopping", archived: true });
  db.from("list_members").update({ role: "editor" }).eq("user_id", userId);
  db.from("profiles").update({ display_name: "Ada", completed_steps: ["welcome"] });
}

export function writesTheDatabaseRefuses(db: SupabaseClient<Database>, listId: string, userId: string, now: string): void {
  // Set by the database (42501 permission denied for table tasks; a push says read_only).
  // @ts-expect-error created_by is not insertable
  db.from("tasks").insert({ list_id: listId, title: "Milk", created_by: userId });
  // @ts-expect-error created_by is not updatable
  db.from("tasks").update({ created_by: userId });
  // @ts-expect-error created_at is not insertable
  db.from("tasks").insert({ list_id: listId, title: "Milk", created_at: now });
  // @ts-expect-error created_by is not insertable
  db.from("lists").insert({ title: "Groceries", created_by: userId });
  // @ts-expect-error created_by is not updatable
  db.from("lists").update({ created_by: userId });
  // @ts-expect-error created_by is not upsertable either
  db.from("lists").upsert({ id: listId, title: "Groceries", created_by: userId });
  // authenticated cannot insert into list_members or profiles at all (invites and sign-up do).
  // @ts-expect-error list_members takes no insert
  db.from("list_members").insert({ list_id: listId, user_id: userId, role: "editor" });
  // @ts-expect-error user_id is not updatable
  db.from("list_members").update({ user_id: userId });
  // @ts-expect-error profiles takes no insert
  db.from("profiles").insert({ id: userId, display_name: "Ada" });
  // @ts-expect-error completed_at is not updatable (complete_onboarding_steps sets it)
  db.from("profiles").update({ completed_at: now });
}

// Reads keep every column.
export const createdBy = (task: Tables<"tasks">): string | null => task.created_by;
export const memberSince = (member: Tables<"list_members">): string => member.created_at;
