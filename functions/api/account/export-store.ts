// Writes the caller's data export (functions/_shared/schemas/account-export.ts)
// as JSON text, section by section, inside deps.db.withUser: every query runs
// as the caller under RLS (plus the narrow doors app_private.my_account(),
// my_sessions(), my_identities(), my_mfa_factors(), my_storage_objects() and
// my_storage_buckets() for what Supabase Auth and Storage hold, and my_list_invites() /
// my_accepted_list_invites() for invites the caller's RLS no longer shows).
// Lists of unbounded size go
// through a server-side cursor, a batch at a time, each batch handed to
// `write` before the next is fetched: memory stays flat whatever the account's
// size, and a slow reader slows the cursor down instead of filling memory.
import { EXPORT_VERSION } from "../../_shared/schemas/account-export.ts";
import { readDeletion } from "./deletion-store.ts";
import type { OwnedRowsRule } from "./export-ownership.ts";
import { listDevices } from "../devices/device-store.ts";
import type { Tx } from "../lib/db.ts";
import { readPreferences } from "../notifications/preference-store.ts";

/** Hands a piece of the document to the reader; resolves when it may take more. */
export type Write = (text: string) => Promise<void>;

/** Rows fetched per cursor batch (and written as one chunk). */
export const EXPORT_ROWS_PER_BATCH = 500;

type JsonRows = ReturnType<Tx>;

async function writeRows(write: Write, rows: JsonRows): Promise<void> {
  await write("[");
  let first = true;
  await rows.cursor(EXPORT_ROWS_PER_BATCH, async (batch: object[]) => {
    await write((first ? "" : ",") + (batch as { json: string }[]).map((row) => row.json).join(","));
    first = false;
  });
  await write("]");
}

async function oneRow(rows: JsonRows): Promise<string> {
  const [row] = await rows as unknown as { json: string | null }[];
  return row?.json ?? "null";
}

/**
 * `rules`: what is the caller's in each synced collection (exportRules(), taken
 * by the route before the first byte, so that no collection fails mid-stream).
 */
export async function writeExport(
  tx: Tx,
  caller: { userId: string; sessionId: string },
  write: Write,
  rules: readonly OwnedRowsRule[],
): Promise<void> {
  const { userId } = caller;
  const member = (name: string) => write(`,${JSON.stringify(name)}:`);

  await write(`{"export_version":${EXPORT_VERSION},"generated_at":${JSON.stringify(new Date().toISOString())}`);
  await member("account");
  await write(await oneRow(tx`select to_jsonb(a)::text as json from app_private.my_account() a`));
  await member("profile");
  await write(await oneRow(tx`select to_jsonb(p)::text as json from public.profiles p where p.id = ${userId}`));
  await member("devices");
  await write(JSON.stringify(await listDevices(tx, caller, null, "stored")));
  await member("sessions");
  await write(`[${(await tx<{ json: string }[]>`select to_jsonb(s)::text as json from app_private.my_sessions() s`).map((s) => s.json).join(",")}]`);
  await member("identities");
  await writeRows(write, tx`select to_jsonb(i)::text as json from app_private.my_identities() i`);
  await member("mfa_factors");
  await writeRows(write, tx`select to_jsonb(f)::text as json from app_private.my_mfa_factors() f`);
  await member("storage_objects");
  await writeRows(write, tx`select to_jsonb(o)::text as json from app_private.my_storage_objects() o`);
  await member("storage_buckets");
  await writeRows(write, tx`select to_jsonb(b)::text as json from app_private.my_storage_buckets() b`);
  await member("notification_preferences");
  await write(JSON.stringify(await readPreferences(tx, userId)));
  await member("notification_preference_history");
  await writeRows(write, tx`
    select json_build_object('id', a.id, 'changed_at', a.changed_at, 'device_id', a.device_id, 'session_id', a.session_id,
                             'old_version', a.old_version, 'new_version', a.new_version, 'old', a.old_document, 'new', a.new_document)::text as json
      from app_private.notification_preference_audit a
     where a.user_id = ${userId}
     order by a.id`);
  await member("list_memberships");
  await writeRows(write, tx`
    select json_build_object('list_id', m.list_id, 'title', l.title, 'role', m.role, 'joined_at', m.created_at)::text as json
      from public.list_members m
      join public.lists l on l.id = m.list_id
     where m.user_id = ${userId}
     order by m.created_at, m.list_id`);
  await member("list_invites");
  await writeRows(write, tx`select to_jsonb(i)::text as json from app_private.my_list_invites() i`);
  await member("accepted_list_invites");
  await writeRows(write, tx`select to_jsonb(i)::text as json from app_private.my_accepted_list_invites() i`);
  await member("sync_op_results");
  await writeRows(write, tx`
    select json_build_object('op_id', o.op_id, 'device_id', o.device_id, 'collection', o.collection, 'record_id', o.record_id,
                             'type', o.type, 'status', o.status, 'version', o.version, 'error', o.error, 'created_at', o.created_at)::text as json
      from app_private.sync_ops o
     where o.user_id = ${userId}`);
  await member("sync_usage");
  await write(await oneRow(tx`
    select json_build_object('live_records', u.live_records)::text as json
      from app_private.sync_usage u
     where u.user_id = ${userId}`));
  await member("sync_access");
  await writeRows(write, tx`
    select json_build_object('scope_id', a.scope_id, 'granted', a.granted, 'changed_at', a.changed_at)::text as json
      from app_private.sync_access a
     where a.user_id = ${userId}
     order by a.changed_at, a.scope_id`);
  await member("tester_group_memberships");
  await writeRows(write, tx`
    select json_build_object('group_id', m.group_id, 'added_at', m.added_at)::text as json
      from app_private.tester_group_members m
     where m.user_id = ${userId}
     order by m.added_at, m.group_id`);
  await member("release_feedback");
  await writeRows(write, tx`
    select json_build_object('id', f.id, 'release_id', f.release_id, 'device_id', f.device_id, 'platform', f.platform,
                             'build_number', f.build_number, 'body', f.body, 'created_at', f.created_at)::text as json
      from app_private.release_feedback f
     where f.user_id = ${userId}
     order by f.created_at, f.id`);
  await member("account_deletion");
  const [attempt] = await tx<{ last_attempt_at: Date | null }[]>`
    select last_attempt_at from app_private.account_deletion_requests where user_id = ${userId}`;
  await write(JSON.stringify({ ...await readDeletion(tx, userId), last_attempt_at: attempt?.last_attempt_at?.toISOString() ?? null }));
  await member("synced");
  await write("{");
  let first = true;
  for (const rule of rules) {
    await write(`${first ? "" : ","}${JSON.stringify(rule.collection)}:`);
    await writeRows(write, rule.query(tx, userId));
    first = false;
  }
  await write(`},"complete":true}`);
}
