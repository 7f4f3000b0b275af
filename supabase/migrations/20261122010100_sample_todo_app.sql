-- What: the sample to-do app's tables, the example a real app replaces:
-- public.lists (the scope), public.list_members (who may do what in a list)
-- and public.tasks (every task belongs to a list), with their RLS policies,
-- column privileges and invariants; each user gets a personal list at
-- signup; lists and tasks are made syncable, list_members grants access.
-- Why: synced data lives in the app's own typed tables, shared between users
-- by scope (the list) and role (owner | editor | viewer); supabase-js and
-- the sync API read and write the same rows under the same policies
-- (docs/security-model.md says who may do what, policy by policy).
--
-- Down step: supabase/rollbacks/20261122010100_sample_todo_app.down.sql.

-- ---------------------------------------------------------------------- lists
create table public.lists (
  id uuid primary key default gen_random_uuid(),
  title text not null constraint lists_title_length check (char_length(title) between 1 and 200),
  color text constraint lists_color_format check (color ~ '^#[0-9a-fA-F]{6}$'),
  position double precision not null default 0,
  archived boolean not null default false,
  created_by uuid default auth.uid() references auth.users (id) on delete set null,
  created_at timestamptz not null default now()
);
comment on table public.lists is 'Sample to-do app: a list of tasks, shared with its members (public.list_members). The scope of sync: a list and its tasks reach exactly its members.';
comment on column public.lists.color is 'A #rrggbb color, or null.';
comment on column public.lists.position is 'Sort key among the user''s lists (fractional indexing).';
comment on column public.lists.created_by is 'The user who created the list (set by the database; becomes its first owner).';
create index lists_created_by_idx on public.lists (created_by);
comment on index public.lists_created_by_idx is 'The foreign key to auth.users (account deletion).';

-- --------------------------------------------------------------- list_members
create table public.list_members (
  list_id uuid not null references public.lists (id) on delete cascade,
  user_id uuid not null references auth.users (id) on delete cascade,
  role text not null constraint list_members_role_known check (role in ('owner', 'editor', 'viewer')),
  created_at timestamptz not null default now(),
  primary key (list_id, user_id)
);
comment on table public.list_members is 'Who may use a list, and how: owner (everything, including members and deleting the list), editor (the list''s fields and its tasks), viewer (read only). A list always keeps an owner.';
create index list_members_user_id_idx on public.list_members (user_id, list_id);
comment on index public.list_members_user_id_idx is 'The policies'' lookup: the lists of the caller.';

-- ---------------------------------------------------------------------- tasks
create table public.tasks (
  id uuid primary key default gen_random_uuid(),
  list_id uuid not null references public.lists (id) on delete cascade,
  title text not null constraint tasks_title_length check (char_length(title) between 1 and 200),
  notes text constraint tasks_notes_length check (char_length(notes) <= 10000),
  done boolean not null default false,
  due_date date,
  position double precision not null default 0,
  created_by uuid default auth.uid() references auth.users (id) on delete set null,
  created_at timestamptz not null default now()
);
comment on table public.tasks is 'Sample to-do app: a task in a list; readable by the list''s members, writable by its owners and editors.';
comment on column public.tasks.list_id is 'The list (scope) the task belongs to; moving a task changes who sees it.';
comment on column public.tasks.position is 'Sort key within its list (fractional indexing).';
comment on column public.tasks.created_by is 'The user who created the task (set by the database).';
create index tasks_list_id_idx on public.tasks (list_id);
comment on index public.tasks_list_id_idx is 'The policies filter tasks by list.';
create index tasks_created_by_idx on public.tasks (created_by);
comment on index public.tasks_created_by_idx is 'The foreign key to auth.users (account deletion).';

-- ------------------------------------------------------------------- helpers
create function app_private.my_list_ids(p_min_role text default 'viewer')
returns uuid[]
language sql
stable
security definer
set search_path = ''
as $$
  select coalesce(array_agg(m.list_id), '{}')
    from public.list_members m
   where m.user_id = (select auth.uid())
     and case p_min_role
           when 'owner' then m.role = 'owner'
           when 'editor' then m.role in ('owner', 'editor')
           else true
         end
$$;
comment on function app_private.my_list_ids(text) is
  'The lists the caller is a member of with at least p_min_role (viewer < editor < owner). SECURITY DEFINER so that policies on list_members can use it without recursing into their own RLS; it only ever answers about the caller.';
revoke all on function app_private.my_list_ids(text) from public, anon, authenticated, service_role;
grant execute on function app_private.my_list_ids(text) to authenticated;

-- ----------------------------------------------------------------- privileges
alter table public.lists enable row level security;
alter table public.list_members enable row level security;
alter table public.tasks enable row level security;
revoke all on public.lists, public.list_members, public.tasks from public, anon, authenticated, service_role;
-- Columns the database sets (created_by, created_at) are not writable by users.
grant select on public.lists, public.list_members, public.tasks to authenticated, service_role;
grant insert (id, title, color, position, archived) on public.lists to authenticated;
grant update (title, color, position, archived) on public.lists to authenticated;
grant delete on public.lists to authenticated;
grant update (role) on public.list_members to authenticated;
grant delete on public.list_members to authenticated;
grant insert (id, list_id, title, notes, done, due_date, position) on public.tasks to authenticated;
grant update (list_id, title, notes, done, due_date, position) on public.tasks to authenticated;
grant delete on public.tasks to authenticated;
grant insert, update, delete on public.lists, public.list_members, public.tasks to service_role;

-- ------------------------------------------------------------------- policies
create policy "Members can read their lists"
  on public.lists for select to authenticated
  using (id in (select unnest(app_private.my_list_ids('viewer'))));
comment on policy "Members can read their lists" on public.lists is 'Every member (owner, editor, viewer) sees the list; nobody else knows it exists.';

create policy "Users can create lists"
  on public.lists for insert to authenticated
  with check (created_by = (select auth.uid()));
comment on policy "Users can create lists" on public.lists is 'Any signed-in user creates lists of their own; the database makes them its owner.';

create policy "Editors can update their lists"
  on public.lists for update to authenticated
  using (id in (select unnest(app_private.my_list_ids('editor'))))
  with check (id in (select unnest(app_private.my_list_ids('editor'))));
comment on policy "Editors can update their lists" on public.lists is 'Owners and editors change a list''s fields; viewers cannot.';

create policy "Owners can delete their lists"
  on public.lists for delete to authenticated
  using (id in (select unnest(app_private.my_list_ids('owner'))));
comment on policy "Owners can delete their lists" on public.lists is 'Only an owner deletes a list (its tasks and memberships go with it).';

create policy "Members can read the members of their lists"
  on public.list_members for select to authenticated
  using (list_id in (select unnest(app_private.my_list_ids('viewer'))));
comment on policy "Members can read the members of their lists" on public.list_members is 'A member sees who else is in the list and with which role.';

create policy "Owners can change the roles of members"
  on public.list_members for update to authenticated
  using (list_id in (select unnest(app_private.my_list_ids('owner'))))
  with check (list_id in (select unnest(app_private.my_list_ids('owner'))));
comment on policy "Owners can change the roles of members" on public.list_members is 'Only owners promote or demote; the last owner cannot step down (trigger).';

create policy "Owners can remove members and members can leave"
  on public.list_members for delete to authenticated
  using (list_id in (select unnest(app_private.my_list_ids('owner'))) or user_id = (select auth.uid()));
comment on policy "Owners can remove members and members can leave" on public.list_members is
  'An owner removes anyone; every member may remove themselves. New members join only through invites (accept_list_invite).';

create policy "Members can read the tasks of their lists"
  on public.tasks for select to authenticated
  using (list_id in (select unnest(app_private.my_list_ids('viewer'))));
comment on policy "Members can read the tasks of their lists" on public.tasks is 'Every member of a task''s list sees it.';

create policy "Editors can add tasks to their lists"
  on public.tasks for insert to authenticated
  with check (list_id in (select unnest(app_private.my_list_ids('editor'))));
comment on policy "Editors can add tasks to their lists" on public.tasks is 'Owners and editors add tasks; viewers cannot.';

create policy "Editors can change the tasks of their lists"
  on public.tasks for update to authenticated
  using (list_id in (select unnest(app_private.my_list_ids('editor'))))
  with check (list_id in (select unnest(app_private.my_list_ids('editor'))));
comment on policy "Editors can change the tasks of their lists" on public.tasks is
  'Owners and editors change tasks; moving a task needs editor rights in both lists.';

create policy "Editors can delete the tasks of their lists"
  on public.tasks for delete to authenticated
  using (list_id in (select unnest(app_private.my_list_ids('editor'))));
comment on policy "Editors can delete the tasks of their lists" on public.tasks is 'Owners and editors delete tasks; viewers cannot.';

-- ------------------------------------------------------------------ invariants
create function app_private.add_list_creator_as_owner()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  insert into public.list_members (list_id, user_id, role)
  select n.id, n.created_by, 'owner' from new_rows n where n.created_by is not null
  on conflict (list_id, user_id) do update set role = 'owner';
  return null;
end;
$$;
comment on function app_private.add_list_creator_as_owner() is
  'Trigger (after insert on lists, per statement): the creator becomes the list''s first owner. SECURITY DEFINER: users cannot insert memberships themselves.';
revoke all on function app_private.add_list_creator_as_owner() from public, anon, authenticated, service_role;

create trigger lists_add_creator_as_owner
  after insert on public.lists
  referencing new table as new_rows
  for each statement execute function app_private.add_list_creator_as_owner();

create function app_private.keep_a_list_owner()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_list uuid;
begin
  -- Account deletion (the cascade from auth.users) is no stepping down: a
  -- list left with no member at all goes with it (nobody could reach it).
  delete from public.lists l
   where l.id in (select o.list_id from old_rows o where not exists (select 1 from auth.users u where u.id = o.user_id))
     and not exists (select 1 from public.list_members m where m.list_id = l.id);
  select o.list_id into v_list
    from (select distinct o.list_id from old_rows o
           where o.role = 'owner' and exists (select 1 from auth.users u where u.id = o.user_id)) o
   where exists (select 1 from public.lists l where l.id = o.list_id)
     and not exists (select 1 from public.list_members m where m.list_id = o.list_id and m.role = 'owner')
   limit 1;
  if v_list is not null then
    raise exception 'a list must keep an owner: make another member owner first, or delete the list'
      using errcode = 'check_violation', constraint = 'list_members_keep_an_owner';
  end if;
  return null;
end;
$$;
comment on function app_private.keep_a_list_owner() is
  'Trigger (after update/delete on list_members, per statement): refuses to leave a list that still exists without an owner, except when the owner''s account is deleted (then a list left without members is deleted too). SECURITY DEFINER: it must see every member, not only the caller''s view.';
revoke all on function app_private.keep_a_list_owner() from public, anon, authenticated, service_role;

create trigger list_members_keep_an_owner_on_delete
  after delete on public.list_members
  referencing old table as old_rows
  for each statement execute function app_private.keep_a_list_owner();
create trigger list_members_keep_an_owner_on_update
  after update on public.list_members
  referencing old table as old_rows
  for each statement execute function app_private.keep_a_list_owner();

create function app_private.check_list_member_update()
returns trigger
language plpgsql
security invoker
set search_path = ''
as $$
begin
  if new.list_id <> old.list_id or new.user_id <> old.user_id then
    raise exception 'a membership keeps its list and user; remove it and invite again' using errcode = 'check_violation';
  end if;
  return new;
end;
$$;
comment on function app_private.check_list_member_update() is 'Trigger (before update on list_members): only the role of a membership changes.';
revoke all on function app_private.check_list_member_update() from public, anon, authenticated, service_role;

create trigger list_members_check_update
  before update on public.list_members
  for each row execute function app_private.check_list_member_update();

create function app_private.create_personal_list_for_new_user()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  -- The personal list's id is the user's id: one per user, known without a lookup.
  insert into public.lists (id, title, created_by) values (new.id, 'Personal', new.id)
  on conflict (id) do nothing;
  return null;
end;
$$;
comment on function app_private.create_personal_list_for_new_user() is
  'Trigger (after insert on auth.users): every user starts with a personal list (id = the user''s id), owned by them.';
revoke all on function app_private.create_personal_list_for_new_user() from public, anon, authenticated, service_role;

create trigger on_auth_user_created_create_personal_list
  after insert on auth.users
  for each row execute function app_private.create_personal_list_for_new_user();

-- ----------------------------------------------------------------------- sync
select app_private.enable_sync('public.lists', 'id');
select app_private.enable_sync('public.tasks', 'list_id');
select app_private.enable_sync_membership('public.list_members', 'list_id', 'user_id');
