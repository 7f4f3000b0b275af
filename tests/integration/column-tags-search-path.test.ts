// A cursor names each collection's columns by their types as `npm run generate` printed them
// (format_type under its search path, `public`: an extension's type as `extensions.citext`). On a
// hosted project the function's role (`postgres`) searches `extensions` too (ALTER ROLE postgres
// SET search_path TO "$user", public, extensions), where format_type prints `citext`: the pull's
// check of the database's columns runs with the generator's search path, so that during a rolling
// deploy an old instance still knows a newer function's cursor as in step with the database (503,
// kept), not as one it must answer 410 (docs/sync.md, "Changing a synced table").
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, expect, it } from "vitest";
import { call } from "../support/harness.ts";
import { untilOpenTransactionsEnd } from "../support/open-transactions.ts";
import { type ProbeStack, startProbeStack, syncedLikeTasks } from "../support/probe-stack.ts";

let probe: ProbeStack;
beforeAll(async () => {
  probe = await startProbeStack("tags_search_path", [
    `create extension if not exists citext with schema extensions`,
    // As on hosted Supabase, for the function's role (the database's owner here).
    `do $$ begin execute format('alter role %I in database %I set search_path = "$user", public, extensions',
        (select r.rolname from pg_roles r join pg_database d on d.datdba = r.oid where d.datname = current_database()), current_database()); end $$`,
    `create table public.tidesync_test_ci (id uuid primary key, list_id uuid not null references public.lists (id) on delete cascade, body text, email extensions.citext)`,
    ...syncedLikeTasks("tidesync_test_ci", ["body", "email"]),
  ]);
}, 180_000);
afterAll(async () => {
  await probe?.stop();
});

type Page = { changes: { id: string; data: Record<string, unknown> | null }[]; cursor: string; has_more: boolean };
const pull = (baseUrl: string, token: string, cursor?: string) => call<Page>(`/v1/sync/changes${cursor ? `?cursor=${cursor}` : ""}`, { token, baseUrl });

it("a column added to a table with a citext column, during the rollout: the old instance answers the new function's cursor 503, kept", async () => {
  expect(probe.collections.find((c) => c.name === "tidesync_test_ci")?.fields.find((f) => f.name === "email")?.type).toBe("extensions.citext");
  const user = await probe.newUser();
  await probe.admin.unsafe(`insert into public.tidesync_test_ci (id, list_id, body, email) values ($1, $2, 'x', 'A@b.c')`, [randomUUID(), user.userId]);
  await untilOpenTransactionsEnd(probe.admin);
  const old = probe.apiUrl;
  await probe.admin.unsafe(`alter table public.tidesync_test_ci add column priority integer not null default 1`);
  const fresh = (await probe.startServer()).apiUrl;
  const onNew = await pull(fresh, user.token);
  expect(onNew.status, onNew.text).toBe(200);
  const onOld = await pull(old, user.token, onNew.body.cursor);
  expect(onOld.status, onOld.text).toBe(503);
  expect(onOld.body).toMatchObject({ error: { code: "UNAVAILABLE" } });
  // The search path is the transaction's again after the check: the new function still serves it.
  expect((await pull(fresh, user.token, onNew.body.cursor)).status).toBe(200);
});
