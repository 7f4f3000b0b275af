-- What: sharing a list by invite code. `rpc('create_list_invite',
-- { p_list_id, p_role })` (owners only) returns a single-use code that
-- expires; `rpc('accept_list_invite', { p_code })` makes the caller a member
-- with the invite's role and returns the list id.
-- Why: the Data API is how an app shares (docs/security-model.md). A code is
-- a bearer secret: only its SHA-256 is stored. Accepting needs to read an
-- invite the caller cannot see and to add a membership nobody may insert
-- directly, so it runs in one small SECURITY DEFINER function outside the
-- exposed schema, called by the public wrapper.
--
-- Down step: supabase/rollbacks/20261122010200_list_invites.down.sql.

create table app_private.list_invites (
  id uuid primary key default gen_random_uuid(),
  list_id uuid not null references public.lists (id) on delete cascade,
  role text not null constraint list_invites_role_known check (role in ('owner', 'editor', 'viewer')),
  code_sha256 bytea not null unique constraint list_invites_code_sha256_length check (octet_length(code_sha256) = 32),
  created_by uuid default auth.uid() references auth.users (id) on delete cascade,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  used_at timestamptz,
  used_by uuid references auth.users (id) on delete set null,
  constraint list_invites_expires_after_creation check (expires_at > created_at),
  constraint list_invites_used_by_only_when_used check (used_at is not null or used_by is null)
);
comment on table app_private.list_invites is 'Single-use, expiring invite codes to a list (only the code''s SHA-256 is stored). Created by owners through public.create_list_invite, redeemed by public.accept_list_invite.';
comment on column app_private.list_invites.code_sha256 is 'SHA-256 of the code; the code itself is shown once, to the owner who created it.';
comment on column app_private.list_invites.used_by is 'Who redeemed the code (null once that user is deleted).';
create index list_invites_list_id_idx on app_private.list_invites (list_id);
comment on index app_private.list_invites_list_id_idx is 'Policies and the foreign key: invites by list.';
create index list_invites_created_by_idx on app_private.list_invites (created_by);
comment on index app_private.list_invites_created_by_idx is 'The foreign key to auth.users.';
create index list_invites_used_by_idx on app_private.list_invites (used_by);
comment on index app_private.list_invites_used_by_idx is 'The foreign key to auth.users.';

alter table app_private.list_invites enable row level security;
revoke all on app_private.list_invites from public, anon, authenticated, service_role;
grant select (id, list_id, role, created_by, created_at, expires_at, used_at) on app_private.list_invites to authenticated;
grant insert (list_id, role, code_sha256, expires_at) on app_private.list_invites to authenticated;
grant delete on app_private.list_invites to authenticated;

create policy "Owners can read the invites of their lists"
  on app_private.list_invites for select to authenticated
  using (list_id in (select unnest(app_private.my_list_ids('owner'))));
comment on policy "Owners can read the invites of their lists" on app_private.list_invites is 'Owners see pending and used invites (never the codes).';

create policy "Owners can create invites to their lists"
  on app_private.list_invites for insert to authenticated
  with check (list_id in (select unnest(app_private.my_list_ids('owner'))) and created_by = (select auth.uid()));
comment on policy "Owners can create invites to their lists" on app_private.list_invites is 'Only an owner invites, in their own name.';

create policy "Owners can withdraw the invites of their lists"
  on app_private.list_invites for delete to authenticated
  using (list_id in (select unnest(app_private.my_list_ids('owner'))));
comment on policy "Owners can withdraw the invites of their lists" on app_private.list_invites is 'An owner deletes an invite before it is used.';

-- ------------------------------------------------------------------- create
create function public.create_list_invite(p_list_id uuid, p_role text default 'editor', p_valid_for interval default interval '7 days')
returns text
language plpgsql
volatile
security invoker
set search_path = ''
as $$
declare
  v_code text := replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', '');
begin
  if p_valid_for is null or p_valid_for <= interval '0' or p_valid_for > interval '30 days' then
    raise exception 'p_valid_for must be between 1 second and 30 days' using errcode = 'invalid_parameter_value';
  end if;
  -- As the caller: the insert policy lets only an owner of the list through.
  insert into app_private.list_invites (list_id, role, code_sha256, expires_at)
  values (p_list_id, p_role, sha256(convert_to(v_code, 'UTF8')), now() + p_valid_for);
  return v_code;
exception
  when insufficient_privilege or foreign_key_violation then
    -- the same answer for a list that does not exist and one the caller does not own
    raise exception 'no such list, or you are not its owner' using errcode = 'insufficient_privilege';
end;
$$;
comment on function public.create_list_invite(uuid, text, interval) is
  'Data API: an owner creates a single-use invite code (64 hex characters) to the list with the given role (owner, editor, viewer), valid for p_valid_for (default 7 days, at most 30).';
revoke all on function public.create_list_invite(uuid, text, interval) from public, anon, authenticated, service_role;
grant execute on function public.create_list_invite(uuid, text, interval) to authenticated;

-- ------------------------------------------------------------------- accept
create function app_private.redeem_list_invite(p_code text)
returns uuid
language plpgsql
volatile
security definer
set search_path = ''
as $$
declare
  v_user uuid := auth.uid();
  v_list uuid;
  v_role text;
begin
  if v_user is null then
    raise exception 'sign in to accept an invite' using errcode = 'insufficient_privilege';
  end if;
  update app_private.list_invites i
     set used_at = now(), used_by = v_user
   where i.code_sha256 = sha256(convert_to(coalesce(p_code, ''), 'UTF8'))
     and i.used_at is null
     and i.expires_at > now()
  returning i.list_id, i.role into v_list, v_role;
  if v_list is null then
    -- wrong, used and expired codes get the same answer
    raise exception 'this invite code is not valid (wrong, already used or expired)' using errcode = 'no_data_found';
  end if;
  -- A member already in the list keeps the better of the two roles.
  insert into public.list_members as m (list_id, user_id, role) values (v_list, v_user, v_role)
  on conflict (list_id, user_id) do update
    set role = case when 'owner' in (m.role, excluded.role) then 'owner'
                    when 'editor' in (m.role, excluded.role) then 'editor'
                    else 'viewer' end
  where m.role is distinct from excluded.role;
  return v_list;
end;
$$;
comment on function app_private.redeem_list_invite(text) is
  'Redeems an invite code for the caller (auth.uid()): marks it used and adds the membership. SECURITY DEFINER (the caller can see neither the invite nor insert memberships); reached only through public.accept_list_invite.';
revoke all on function app_private.redeem_list_invite(text) from public, anon, authenticated, service_role;
grant execute on function app_private.redeem_list_invite(text) to authenticated;

create function public.accept_list_invite(p_code text)
returns uuid
language sql
volatile
security invoker
set search_path = ''
as $$
  select app_private.redeem_list_invite(p_code)
$$;
comment on function public.accept_list_invite(text) is
  'Data API: joins the list of an invite code with the invite''s role and returns the list id. Wrong, used and expired codes all fail alike.';
revoke all on function public.accept_list_invite(text) from public, anon, authenticated, service_role;
grant execute on function public.accept_list_invite(text) to authenticated;
