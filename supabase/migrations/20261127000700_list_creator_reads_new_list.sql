-- What: the creator of a list may read it back in the statement that creates
-- it. The select policy "Members can read their lists" gains a branch true
-- only while the list has no member at all and the caller is its creator
-- (created_by), through app_private.list_has_members() (SECURITY DEFINER: it
-- sees every membership, not only the caller's view).
-- Why: supabase-js's `.from("lists").insert({ title }).select()` (PostgREST:
-- insert … returning) failed "new row violates row-level security policy for
-- table lists": Postgres checks the select policy on a returned row before
-- the AFTER trigger add_list_creator_as_owner makes the creator its owner.
-- Access is not widened afterwards: a list always keeps an owner
-- (keep_a_list_owner; a list left without members by an account deletion is
-- deleted), so once the statement is over the branch is false and the
-- membership rule decides alone; a creator who left or was removed sees
-- nothing. visible_scope_ids() (which reads lists through this policy) gains
-- nothing: it runs in a statement of its own, after the creating one.
-- pgTAP 116-list-creator-reads-new-list; docs/security-model.md.
--
-- Down step: supabase/rollbacks/20261127000700_list_creator_reads_new_list.down.sql.

create function app_private.list_has_members(p_list_id uuid)
returns boolean
language sql
stable
security definer
set search_path = ''
as $$
  select exists (select 1 from public.list_members m where m.list_id = p_list_id)
$$;
comment on function app_private.list_has_members(uuid) is
  'Whether the list has any member: false only for a list being created, before its AFTER INSERT trigger adds the creator as owner (a list always keeps an owner). For the lists select policy. SECURITY DEFINER (it must see every membership); answers true or false only.';
revoke all on function app_private.list_has_members(uuid) from public, anon, authenticated, service_role;
grant execute on function app_private.list_has_members(uuid) to authenticated;

-- Written as `id = any (<initplan>)` rather than `id in (select unnest(…))`: under an OR the
-- latter is a hashed subplan tested on every row of lists (a scan of the whole table for each
-- visible_scope_ids(), ~40x slower pushes in bench:against), while both arms of this OR are
-- index conditions (lists_pkey, lists_created_by_idx) of one BitmapOr, my_list_ids run once.
alter policy "Members can read their lists" on public.lists
  using (id = any ((select app_private.my_list_ids('viewer'))::uuid[])
         or (created_by = (select auth.uid()) and not app_private.list_has_members(id)));
comment on policy "Members can read their lists" on public.lists is 'Every member (owner, editor, viewer) sees the list; nobody else knows it exists. Its creator also reads it back in the statement that creates it (insert … returning, supabase-js insert().select()), before the database makes them its owner.';
