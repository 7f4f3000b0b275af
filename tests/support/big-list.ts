// A user's list of many tasks written straight into the database (as the owner):
// for tests that need an export or a pull bigger than the stream's buffers.
import { randomUUID } from "node:crypto";
import { adminSql } from "./harness.ts";

/** Creates a list owned by `userId` holding `tasks` tasks with 100-character notes; returns its id. */
export async function seedListOfTasks(userId: string, tasks: number): Promise<string> {
  const list = randomUUID();
  await adminSql`insert into public.lists (id, title, created_by) values (${list}, 'big', ${userId})`;
  await adminSql`insert into public.list_members (list_id, user_id, role) values (${list}, ${userId}, 'owner') on conflict do nothing`;
  await adminSql`insert into public.tasks (list_id, title, notes, created_by)
                 select ${list}, 'task ' || g, repeat('x', 100), ${userId} from generate_series(1, ${tasks}) g`;
  return list;
}
