// An app's own scope table (docs/security-model.md's boards, here tidesync_test_boards) needs a
// membership table: the engine learns that a user lost a scope only from a
// deleted membership row (app_private.sync_access), and a deleted scope row is
// no longer visible to anyone, so without one its delete reached no device (an
// incremental pull listed neither the board nor its notes, even a note's
// delete an earlier pull had listed; a full sync listed none of them, so the
// device kept them until a 410) and its owner could not create its id again
// (NOT_FOUND). Now enable_sync refuses such a table when its transaction
// commits (migration 20261128001900), and the documented way, a membership
// table with one owner row per board (docs/security-model.md, step 4), gets a
// board's delete to the owner's other device and lets her create its id again.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TidesyncApi } from "../../client/api-client.ts";
import { MemoryStorage } from "../../client/storage.ts";
import { TidesyncClient } from "../../client/sync-client.ts";
import { changesResponseSchema, syncBatchResponseSchema } from "../../functions/_shared/schemas/sync.ts";
import { call } from "../support/harness.ts";
import { type ProbeStack, type ProbeUser, startProbeStack } from "../support/probe-stack.ts";
import { remove, settled, upsert } from "../support/shared-lists.ts";

// The reviewer's personal board, as docs/security-model.md step 4 presented it (no membership table).
// Named tidesync_test_<suffix>, apart from an app's own tables (tests/unit/test-tables-apart-from-recipes.unit.test.ts).
const boardsTable = (suffix: string, name = `tidesync_test_${suffix}`) => [
  `create table public.tidesync_test_${suffix} (id uuid primary key default gen_random_uuid(), name text not null,
     created_by uuid not null default auth.uid() references auth.users (id) on delete cascade)`,
  `create index tidesync_test_${suffix}_created_by_idx on public.${name} (created_by)`,
  `alter table public.${name} enable row level security`,
  `revoke all on public.${name} from public, anon, authenticated, service_role`,
  `grant select, delete on public.${name} to authenticated`,
  `grant insert (id, name), update (id, name) on public.${name} to authenticated`,
  `create policy "Owners read their ${name}" on public.${name} for select to authenticated using (created_by = (select app_private.live_uid()))`,
  `create policy "Owners add ${name}" on public.${name} for insert to authenticated with check (created_by = (select app_private.live_uid()))`,
  `create policy "Owners change ${name}" on public.${name} for update to authenticated
     using (created_by = (select app_private.live_uid())) with check (created_by = (select app_private.live_uid()))`,
  `create policy "Owners delete ${name}" on public.${name} for delete to authenticated using (created_by = (select app_private.live_uid()))`,
];

let probe: ProbeStack;
beforeAll(async () => {
  probe = await startProbeStack("scope_membership", [
    ...boardsTable("boards"),
    // The membership table: one owner row per board, written by the database, gone with the board.
    `create table public.tidesync_test_board_members (
       board_id uuid primary key references public.tidesync_test_boards (id) on delete cascade,
       user_id uuid not null references auth.users (id) on delete cascade)`,
    `create index tidesync_test_board_members_user_id_idx on public.tidesync_test_board_members (user_id)`,
    `alter table public.tidesync_test_board_members enable row level security`,
    `revoke all on public.tidesync_test_board_members from public, anon, authenticated, service_role`,
    `create policy "Nobody reads board memberships" on public.tidesync_test_board_members
       as restrictive for select to anon, authenticated, service_role using (false)`,
    `create function app_private.tidesync_test_add_board_creator_as_owner() returns trigger language plpgsql security definer set search_path = '' as $$
     begin
       insert into public.tidesync_test_board_members (board_id, user_id) select n.id, n.created_by from new_rows n;
       return null;
     end $$`,
    `revoke all on function app_private.tidesync_test_add_board_creator_as_owner() from public, anon, authenticated, service_role`,
    `create trigger boards_add_creator_as_owner after insert on public.tidesync_test_boards
       referencing new table as new_rows for each statement execute function app_private.tidesync_test_add_board_creator_as_owner()`,
    `select app_private.enable_sync_membership('public.tidesync_test_board_members', 'board_id', 'user_id')`,
    `select app_private.enable_sync('public.tidesync_test_boards', 'id')`,
    // Notes scoped by their board.
    `create table public.tidesync_test_board_notes (id uuid primary key default gen_random_uuid(),
       board_id uuid not null references public.tidesync_test_boards (id) on delete cascade, text text not null)`,
    `alter table public.tidesync_test_board_notes enable row level security`,
    `revoke all on public.tidesync_test_board_notes from public, anon, authenticated, service_role`,
    `grant select, delete on public.tidesync_test_board_notes to authenticated`,
    `grant insert (id, board_id, text), update (id, board_id, text) on public.tidesync_test_board_notes to authenticated`,
    `create policy "Board owners read notes" on public.tidesync_test_board_notes for select to authenticated using (board_id in (select id from public.tidesync_test_boards))`,
    `create policy "Board owners add notes" on public.tidesync_test_board_notes for insert to authenticated with check (board_id in (select id from public.tidesync_test_boards))`,
    `create policy "Board owners change notes" on public.tidesync_test_board_notes for update to authenticated
       using (board_id in (select id from public.tidesync_test_boards)) with check (board_id in (select id from public.tidesync_test_boards))`,
    `create policy "Board owners delete notes" on public.tidesync_test_board_notes for delete to authenticated using (board_id in (select id from public.tidesync_test_boards))`,
    `select app_private.enable_sync('public.tidesync_test_board_notes', 'board_id')`,
  ]);
}, 120_000);

afterAll(async () => {
  await probe?.stop();
});

async function pushOk(user: ProbeUser, ops: unknown[]) {
  const response = await call("/v1/sync/batch", { method: "POST", token: user.token, body: { ops }, baseUrl: probe.apiUrl });
  expect(response.status, response.text).toBe(200);
  return syncBatchResponseSchema.parse(response.body);
}

async function pullAll(user: ProbeUser, cursor?: string) {
  await settled();
  const changes: ReturnType<typeof changesResponseSchema.parse>["changes"] = [];
  for (;;) {
    const query = new URLSearchParams(cursor ? { cursor } : {});
    const response = await call(`/v1/sync/changes?${query}`, { token: user.token, baseUrl: probe.apiUrl });
    expect(response.status, response.text).toBe(200);
    const page = changesResponseSchema.parse(response.body);
    changes.push(...page.changes);
    cursor = page.cursor;
    if (!page.has_more) return { changes, cursor: cursor! };
  }
}

async function device(user: ProbeUser): Promise<TidesyncClient> {
  const api = new TidesyncApi({ baseUrl: probe.apiUrl, getAccessToken: () => user.token });
  const installationId = randomUUID();
  await api.startSession({ device: { installation_id: installationId, platform: "ios", app_version: "1.0.0", build_number: 1 } });
  return await TidesyncClient.open({ api, storage: new MemoryStorage(), installationId });
}

describe("a scope table of the app's own", () => {
  it("without a membership table, enable_sync is refused when its transaction commits, naming what to add", async () => {
    const statements = [...boardsTable("lone_boards"), `select app_private.enable_sync('public.tidesync_test_lone_boards', 'id')`];
    const error = await probe.admin.begin(async (tx) => {
      for (const statement of statements) await tx.unsafe(statement);
    }).then(() => null, (e: { code?: string; message?: string }) => e);
    expect(error?.code).toBe("22023");
    expect(error?.message).toContain("public.tidesync_test_lone_boards has no membership table");
    const [{ exists }] = await probe.admin`select exists (select 1 from app_private.sync_tables where relation::text = 'public.tidesync_test_lone_boards') as exists`;
    expect(exists).toBe(false);
  }, 60_000);

  it("with one owner row per board: a board's delete and a note's reach the owner's other device, and she creates the board's id again", async () => {
    const alice = await probe.newUser();
    const [board, n1, n2] = [randomUUID(), randomUUID(), randomUUID()];
    const created = await pushOk(alice, [
      upsert("tidesync_test_boards", board, { name: "B" }),
      upsert("tidesync_test_board_notes", n1, { board_id: board, text: "one" }),
      upsert("tidesync_test_board_notes", n2, { board_id: board, text: "two" }),
    ]);
    expect(created.results.map((r) => r.status)).toEqual(["applied", "applied", "applied"]);
    const phone = await device(alice);
    await settled();
    await phone.sync();
    expect([(await phone.list("tidesync_test_boards")).length, (await phone.list("tidesync_test_board_notes")).length]).toEqual([1, 2]);
    const before = await pullAll(alice);

    // A note deleted alone, then the board (its other note goes by the cascade).
    await pushOk(alice, [remove("tidesync_test_board_notes", n2, created.results[2].record!.version)]);
    const afterNote = await pullAll(alice, before.cursor);
    expect(afterNote.changes.map((c) => [c.id, c.deleted])).toEqual([[n2, true]]);
    const deleted = await pushOk(alice, [remove("tidesync_test_boards", board, created.results[0].record!.version)]);
    expect(deleted.results[0].status).toBe("applied");

    // Both incremental pulls list every removal, the note's delete an earlier pull had listed too.
    const fromBefore = await pullAll(alice, before.cursor);
    expect(fromBefore.changes.filter((c) => c.deleted).map((c) => c.id).sort()).toEqual([board, n1, n2].sort());
    const fromNote = await pullAll(alice, afterNote.cursor);
    expect(fromNote.changes.filter((c) => c.deleted).map((c) => c.id).sort()).toEqual([board, n1, n2].sort());
    await settled();
    await phone.sync();
    expect([(await phone.list("tidesync_test_boards")).length, (await phone.list("tidesync_test_board_notes")).length]).toEqual([0, 0]);
    await phone.close();

    // Her board's id is hers to create again (she could read all of its history), by a push and by the Data API.
    const again = await pushOk(alice, [upsert("tidesync_test_boards", board, { name: "B again" })]);
    expect(again.results[0].status).toBe("applied");
    const gone = await pushOk(alice, [remove("tidesync_test_boards", board, again.results[0].record!.version)]);
    expect(gone.results[0].status).toBe("applied");
    await probe.admin.begin(async (tx) => {
      await tx`select set_config('role', 'authenticated', true),
                      set_config('request.jwt.claims', ${JSON.stringify({ sub: alice.userId, role: "authenticated", session_id: alice.sessionId })}, true)`;
      await tx`insert into public.tidesync_test_boards (id, name) values (${board}, 'web')`;
    });
    const [{ count }] = await probe.admin`select count(*)::int as count from public.tidesync_test_board_members where board_id = ${board} and user_id = ${alice.userId}`;
    expect(count).toBe(1);
    // The policies compare live_uid() (step 3): a token of a session that was signed out (its row is gone) reads nothing.
    const boardsSeenWith = (sessionId: string) =>
      probe.admin.begin(async (tx) => {
        await tx`select set_config('role', 'authenticated', true),
                        set_config('request.jwt.claims', ${JSON.stringify({ sub: alice.userId, role: "authenticated", session_id: sessionId })}, true)`;
        const [{ count }] = await tx`select count(*)::int as count from public.tidesync_test_boards where id = ${board}`;
        return count as number;
      });
    expect([await boardsSeenWith(alice.sessionId), await boardsSeenWith(randomUUID())]).toEqual([1, 0]);
  }, 120_000);

  it("someone else cannot create a deleted board's id (its history was never theirs)", async () => {
    const [alice, mallory] = [await probe.newUser(), await probe.newUser()];
    const board = randomUUID();
    const created = await pushOk(alice, [upsert("tidesync_test_boards", board, { name: "B" }), upsert("tidesync_test_board_notes", randomUUID(), { board_id: board, text: "x" })]);
    await pushOk(alice, [remove("tidesync_test_boards", board, created.results[0].record!.version)]);
    const taken = await pushOk(mallory, [upsert("tidesync_test_boards", board, { name: "mine" })]);
    expect(taken.results[0]).toMatchObject({ status: "rejected", error: { code: "NOT_FOUND" } });
  }, 60_000);
});
