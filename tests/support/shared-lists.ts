// Shared-list scenarios as an app drives them: pushes and pulls through the
// real function, and the Data API calls (PostgREST runs them as role
// `authenticated` with the caller's claims: so does `asUser`).
import { randomUUID } from "node:crypto";
import type postgres from "postgres";
import { expect } from "vitest";
import { changesResponseSchema, syncBatchResponseSchema } from "../../functions/_shared/schemas/sync.ts";
import { adminSql, type ApiResponse, call, createTestUser, type TestUser } from "./harness.ts";
import { untilOpenTransactionsEnd } from "./open-transactions.ts";

export interface Op {
  op_id: string;
  collection: string;
  record_id: string;
  type: "upsert" | "delete";
  base_version: number | null;
  data?: Record<string, unknown>;
}

export function upsert(collection: string, recordId: string, data: Record<string, unknown>, baseVersion: number | null = null): Op {
  return { op_id: randomUUID(), collection, record_id: recordId, type: "upsert", base_version: baseVersion, data };
}

export function remove(collection: string, recordId: string, baseVersion: number | null): Op {
  return { op_id: randomUUID(), collection, record_id: recordId, type: "delete", base_version: baseVersion };
}

/** POST /v1/sync/batch as `user` (or with a token), to the test stack or to `baseUrl` (a server with other limits). */
export async function push(user: TestUser | string, body: unknown, baseUrl?: string): Promise<ApiResponse> {
  return await call("/v1/sync/batch", { method: "POST", token: typeof user === "string" ? user : user.token, body, baseUrl });
}

/** Pushes and asserts a 200 whose body matches the shared response schema. */
export async function pushOk(user: TestUser | string, body: unknown, baseUrl?: string) {
  const response = await push(user, body, baseUrl);
  expect(response.status, response.text).toBe(200);
  return syncBatchResponseSchema.parse(response.body);
}

/**
 * Waits until every transaction that began before this call has ended, in the
 * whole cluster (other databases' too). A pull reads entries only below the
 * xmin of its snapshot (docs/sync.md), so after this the next pull delivers
 * every write made so far: call it before a pull that must contain a change.
 */
export async function settled(): Promise<void> {
  await untilOpenTransactionsEnd(adminSql);
}

/**
 * Follows cursors until has_more is false; returns every change and the last cursor. It first
 * waits for every transaction open now to end (settled): a pull stops below the oldest open
 * transaction in the cluster, and test files run in parallel with writers that hold theirs open.
 */
export async function pullAll(user: TestUser, cursor?: string, limit = 1000) {
  await settled();
  const changes: ReturnType<typeof changesResponseSchema.parse>["changes"] = [];
  for (;;) {
    const query = new URLSearchParams({ limit: String(limit), ...(cursor ? { cursor } : {}) });
    const response = await call(`/v1/sync/changes?${query}`, { token: user.token });
    expect(response.status, response.text).toBe(200);
    const page = changesResponseSchema.parse(response.body);
    changes.push(...page.changes);
    cursor = page.cursor;
    if (!page.has_more) return { changes, cursor: cursor! };
  }
}

/** True when Postgres rolled the call back as a deadlock (40P01) or serialization (40001) victim: the caller may retry it. */
export function isLockVictim(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === "40P01" || code === "40001";
}

/** Runs `work` as the user the way PostgREST does: role authenticated + request.jwt.claims, in one transaction. */
export async function asUser<T>(user: TestUser, work: (tx: postgres.TransactionSql) => Promise<T>): Promise<T> {
  return await adminSql.begin(async (tx) => {
    await tx`select set_config('request.jwt.claims', ${JSON.stringify({ sub: user.userId, role: "authenticated", session_id: user.sessionId })}, true),
                    set_config('role', 'authenticated', true)`;
    return await work(tx);
  }) as T;
}

/** rpc('create_list_invite') then rpc('accept_list_invite') (what an app does with supabase-js). */
export async function share(owner: TestUser, listId: string, member: TestUser, role: "owner" | "editor" | "viewer"): Promise<void> {
  const code = await asUser(owner, async (tx) => (await tx<{ code: string }[]>`select public.create_list_invite(${listId}, ${role}) as code`)[0].code);
  await asUser(member, (tx) => tx`select public.accept_list_invite(${code})`);
}

/** Alice's new list "Shared", shared with Bob in `role` (the setting of the race tests). */
export async function sharedList(role: "owner" | "editor" | "viewer"): Promise<{ alice: TestUser; bob: TestUser; list: string }> {
  const alice = await createTestUser();
  const bob = await createTestUser();
  const list = randomUUID();
  await pushOk(alice, { ops: [upsert("lists", list, { title: "Shared" })] });
  await share(alice, list, bob, role);
  return { alice, bob, list };
}

/** from('list_members').delete() by `by` (an owner removing a member, or the member leaving). */
export async function removeMember(by: TestUser, listId: string, member: TestUser): Promise<void> {
  await asUser(by, (tx) => tx`delete from public.list_members where list_id = ${listId} and user_id = ${member.userId}`);
}

/** The ids of a list's memberships (its synced list_members rows), read as the admin. */
export async function membershipIds(listId: string): Promise<string[]> {
  return (await adminSql<{ id: string }[]>`select id::text from public.list_members where list_id = ${listId}`).map((r) => r.id);
}

/** The keys ("collection/id", sorted) a device of `user` keeps of their own: their personal list and their membership of it. */
export async function personalKeys(user: TestUser): Promise<string[]> {
  return [...(await membershipIds(user.userId)).map((id) => `list_members/${id}`), `lists/${user.userId}`].sort();
}

/** A device's local view after applying changes in order: id → data (removals drop the entry). */
export function applyChanges(local: Map<string, Record<string, unknown>>, changes: { collection: string; id: string; deleted: boolean; data: Record<string, unknown> | null }[]) {
  for (const change of changes) {
    const key = `${change.collection}/${change.id}`;
    if (change.deleted) local.delete(key);
    else local.set(key, change.data!);
  }
  return local;
}
