-- What: every door a user's access token opens through the Data API
-- (PostgREST, supabase-js, pg_graphql) and Realtime now needs the token's
-- session to count, by the one rule app_private.session_is_live(): its
-- auth.sessions row exists for that user and has not ended by time, and the
-- user can sign in (app_private.cannot_sign_in: not banned, not soft-deleted).
-- app_private.live_uid() is auth.uid() while the caller's session counts and
-- null otherwise (also for a token without a session_id claim, which Supabase
-- Auth never issues and the api function answers 401); it takes the place of
-- auth.uid() where the caller's rights start:
--   * app_private.my_list_ids(), the helper of every policy of public.lists,
--     list_members and tasks (and of list_invites, pending_list_invites,
--     require_list_role, visible_scope_ids and so the sync policies and the
--     Realtime scope topics);
--   * the policies that named auth.uid() themselves: "Members can read their
--     lists" (the creator's branch), "Users can create lists", "Owners can
--     remove members and members can leave" (leaving), and both of
--     public.profiles (so complete_onboarding_steps too);
--   * redeem_list_invite (public.accept_list_invite): a redeemer who cannot
--     sign in, or whose session was signed out, is refused like anon (42501);
--   * may_receive_poke (Realtime's join of tidesync:user:<id>).
-- Each stays once per statement: the policies call it in an initplan
-- ((select …)), my_list_ids once per call. The api function checks its session
-- once, when its transaction begins, and marks the transaction
-- (tidesync.live_session): its statements are not checked again, so a request
-- still runs to its end as if before a sign-out that commits meanwhile
-- (docs/devices-and-sessions.md). To keep the Data API's check cheap,
-- session_has_ended() becomes PL/pgSQL (same rule): as a SQL function with
-- SET search_path it could not be inlined and was parsed and planned again on
-- every session_is_live() call (~0.2 ms as authenticated, now ~0.04 ms), and
-- session_is_live() reads "can sign in" from cannot_sign_in() instead of
-- repeating it.
-- Why: only the api function checked the session (liveSession()). PostgREST
-- accepts a token until its exp (up to an hour), so after a deletion request
-- ("other sessions are signed out at once", docs/account-deletion.md) the
-- stolen session kept reading and writing the user's lists through the Data
-- API and could create an owner invite that a third account redeemed (the
-- purge then handed the list to it); after DELETE /v1/devices/{id} the lost
-- phone kept deleting tasks; a banned user kept accepting invites and reading
-- the lists they joined. The tables' owner and service_role bypass RLS and do
-- not call these functions with a user's claims: scripts, purges and the
-- release manager are unchanged.
-- pgTAP 309-data-api-needs-a-live-session; tests/integration/data-api-after-sign-out.test.ts;
-- docs/security-model.md, docs/devices-and-sessions.md, docs/account-deletion.md.
-- Rollback: supabase/rollbacks/20261128001800_data_api_needs_a_live_session.down.sql

create or replace function app_private.session_has_ended(p_not_after timestamptz, p_created_at timestamptz, p_refreshed_at timestamp)
returns boolean
language plpgsql
stable
security invoker
set search_path = ''
as $$
begin
  -- refreshed_at is a timestamp without time zone that Supabase Auth writes in UTC.
  return coalesce(p_not_after <= now(), false)
      or coalesce(p_created_at + nullif(app_private.auth_sessions_timebox(), interval '0') < now(), false)
      or coalesce(coalesce(p_refreshed_at at time zone 'UTC', p_created_at)
                  + nullif(app_private.auth_sessions_inactivity_timeout(), interval '0') < now(), false);
end;
$$;
comment on function app_private.session_has_ended(timestamptz, timestamptz, timestamp) is
  'Whether an auth.sessions row (its not_after, created_at, refreshed_at) has ended by time, as Supabase Auth''s Session.CheckValidity: past not_after, past created_at + app_private.auth_sessions_timebox(), or past refreshed_at (created_at while never refreshed) + app_private.auth_sessions_inactivity_timeout(). The time part of app_private.session_is_live() and what the push-token sweep releases. PL/pgSQL, so its plan is cached per connection (session_is_live runs in every statement of a user''s request).';

create or replace function app_private.session_is_live(p_session_id uuid, p_user_id uuid)
returns boolean
language plpgsql
stable
security definer
set search_path = ''
as $$
begin
  -- A user learns nothing of another user's sessions.
  if current_setting('role') = 'authenticated' and p_user_id is distinct from auth.uid() then
    return false;
  end if;
  -- A session row always has its user (the foreign key cascades).
  return exists (select 1
                   from auth.sessions s
                  where s.id = p_session_id
                    and s.user_id = p_user_id
                    and not app_private.session_has_ended(s.not_after, s.created_at, s.refreshed_at))
     and not app_private.cannot_sign_in(p_user_id);
end
$$;
comment on function app_private.session_is_live(uuid, uuid) is
  'The one rule for "this Supabase session still counts": its auth.sessions row exists for p_user_id and has not ended by time (app_private.session_has_ended: not_after, Supabase Auth''s time-box and inactivity timeout), and the user can sign in (app_private.cannot_sign_in: neither banned nor soft-deleted). The api function''s session check, the Data API''s and Realtime''s policies and functions (through app_private.live_uid()), GET /v1/devices (active) and app_private.push_targets apply it. Security definer: authenticated cannot read auth.sessions; called as authenticated it answers only for the caller''s own sessions (false for anyone else''s). plpgsql, so its plan is cached per connection.';

create function app_private.live_uid()
returns uuid
language plpgsql
stable
security invoker
set search_path = ''
as $$
declare
  v_user uuid := auth.uid();
  v_session text := nullif(auth.jwt() ->> 'session_id', '');
begin
  -- A token without session_id (never one of Supabase Auth's) names no live session.
  if v_user is null or v_session is null then
    return null;
  end if;
  -- The api function checked this session when its transaction began (withUser)
  -- and marked it: its request runs to its end as if it came before a sign-out
  -- committing meanwhile. Only the api sets this, as it sets request.jwt.claims,
  -- which every policy trusts alike; PostgREST and Realtime never do.
  if current_setting('tidesync.live_session', true) = v_session then
    return v_user;
  end if;
  if app_private.session_is_live(v_session::uuid, v_user) then
    return v_user;
  end if;
  return null;
end;
$$;
comment on function app_private.live_uid() is
  'auth.uid() while the caller''s session counts (app_private.session_is_live of the token''s session_id claim: not signed out, not ended by time, the user neither banned nor soft-deleted), else null; null for a token without session_id. What the policies and functions reached with a user''s token (Data API, Realtime) take for the caller, in an initplan ((select app_private.live_uid())), so that a signed-out session''s unexpired token opens nothing. A transaction of the api function that checked its session first (setting tidesync.live_session to its id, as it sets request.jwt.claims) is not checked again: a request runs to its end as if before a sign-out that commits meanwhile. EXECUTE for authenticated only.';
revoke all on function app_private.live_uid() from public, anon, authenticated, service_role;
grant execute on function app_private.live_uid() to authenticated;

create or replace function app_private.my_list_ids(p_min_role text default 'viewer')
returns uuid[]
language plpgsql
stable
security definer
set search_path = ''
as $$
begin
  return (
    select coalesce(array_agg(m.list_id), '{}')
      from public.list_members m
     where m.user_id = (select app_private.live_uid())
       and case p_min_role
             when 'owner' then m.role = 'owner'
             when 'editor' then m.role in ('owner', 'editor')
             else true
           end);
end;
$$;
comment on function app_private.my_list_ids(text) is
  'The lists the caller is a member of with at least p_min_role (viewer < editor < owner); none while the caller''s session does not count (app_private.live_uid()). SECURITY DEFINER so that policies on list_members can use it without recursing into their own RLS; it only ever answers about the caller.';

create or replace function app_private.may_receive_poke(p_topic text)
returns boolean
language sql
stable
set search_path = ''
as $$
  select case
    when p_topic = 'tidesync:user:' || (select app_private.live_uid())::text then true
    when p_topic ~ '^tidesync:scope:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
      then substr(p_topic, 16)::uuid = any (app_private.visible_scope_ids())
    else false
  end;
$$;
comment on function app_private.may_receive_poke(text) is
  'True when the caller may receive the pokes of a Realtime topic: their own tidesync:user:<id>, or tidesync:scope:<id> of a scope (list) the scope table''s policies let them read; false for both while the caller''s session does not count (app_private.live_uid()). Any other topic: false.';

create or replace function app_private.redeem_list_invite(p_code text)
returns uuid
language plpgsql
volatile
security definer
set search_path = ''
as $$
declare
  -- A redeemer must be able to sign in as much as the code's creator.
  v_user uuid := app_private.live_uid();
  v_invite uuid;
  v_list uuid;
  v_role text;
  v_current text;
  v_ranks constant text[] := array['viewer', 'editor', 'owner'];
  -- codes are hex: as typed in capitals or pasted with whitespace around, the same code
  v_hash constant bytea := sha256(convert_to(lower(regexp_replace(coalesce(p_code, ''), '^\s+|\s+$', '', 'g')), 'UTF8'));
begin
  if v_user is null then
    raise exception 'sign in to accept an invite' using errcode = 'insufficient_privilege';
  end if;
  -- The list's row first (as the membership's foreign key would), then the
  -- code's: the order of a list's delete (its row, then the cascade to its
  -- invites). The other way round, an accept that locked the code while a
  -- delete held the list (the account purge locks a user's lists first) ended
  -- in a deadlock. A list deleted meanwhile leaves no code: a wrong one's answer.
  perform 1 from public.lists l
   where l.id = (select i.list_id from app_private.list_invites i where i.code_sha256 = v_hash)
     for key share;
  -- Locked: of two accepts of one code, the second sees it used once the first commits.
  select i.id, i.list_id, i.role into v_invite, v_list, v_role
    from app_private.list_invites i
   where i.code_sha256 = v_hash
     and i.used_at is null
     and i.expires_at > now()
     -- the owner who created it still is one and can sign in (a removed,
     -- soft-deleted or banned owner's codes admit nobody)
     and app_private.invite_is_honoured(i.list_id, i.created_by)
     for update of i;
  if v_invite is null then
    -- wrong, used and expired codes, and those of a former owner or one who
    -- cannot sign in, get the same answer
    raise exception 'this invite code is not valid (wrong, already used or expired)' using errcode = 'no_data_found';
  end if;
  select m.role into v_current from public.list_members m where m.list_id = v_list and m.user_id = v_user;
  -- A member whose role is already as good changes nothing: the code stays for its invitee.
  if array_position(v_ranks, v_current) >= array_position(v_ranks, v_role) then
    return v_list;
  end if;
  update app_private.list_invites set used_at = now(), used_by = v_user where id = v_invite;
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
  'Redeems an invite code (trimmed, lower-cased) for the caller while its creator is an owner of the list who can sign in (app_private.invite_is_honoured) and the caller''s own session counts (app_private.live_uid(): else 42501, as for anon): adds the membership or raises the caller''s role to the invite''s and marks the code used; a member whose role is already as good keeps it and leaves the code unused. Locks the list''s row (FOR KEY SHARE) before the code''s, as a delete of the list does: racing that delete, it waits and answers as for a wrong code. SECURITY DEFINER (the caller can see neither the invite nor insert memberships); reached only through public.accept_list_invite.';

-- The policies that named the caller themselves (the others go through my_list_ids()).
alter policy "Members can read their lists" on public.lists
  using (id = any ((select app_private.my_list_ids('viewer'))::uuid[])
         or (created_by = (select app_private.live_uid()) and not app_private.list_has_members(id)));
alter policy "Users can create lists" on public.lists
  with check (created_by = (select app_private.live_uid()));
alter policy "Owners can remove members and members can leave" on public.list_members
  using (list_id in (select unnest(app_private.my_list_ids('owner'))) or user_id = (select app_private.live_uid()));
alter policy "Users can read their own profile" on public.profiles
  using (id = (select app_private.live_uid()));
alter policy "Users can update their own profile" on public.profiles
  using (id = (select app_private.live_uid()))
  with check (id = (select app_private.live_uid()));
