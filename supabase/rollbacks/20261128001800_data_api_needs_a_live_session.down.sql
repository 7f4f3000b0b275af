-- Down step of 20261128001800_data_api_needs_a_live_session.sql: the policies
-- name auth.uid() again, my_list_ids(), may_receive_poke() and
-- redeem_list_invite() as 20261126000400, 20261122060100 and 20261128001010
-- made them, session_has_ended() as a SQL function and session_is_live() with
-- its own "can sign in" test as 20261127001860 made them; then live_uid() goes.
-- (Bodies as the catalog held them before the migration.)

alter policy "Members can read their lists" on public.lists
  using (id = any ((select app_private.my_list_ids('viewer'))::uuid[])
         or (created_by = (select auth.uid()) and not app_private.list_has_members(id)));
alter policy "Users can create lists" on public.lists
  with check (created_by = (select auth.uid()));
alter policy "Owners can remove members and members can leave" on public.list_members
  using (list_id in (select unnest(app_private.my_list_ids('owner'))) or user_id = (select auth.uid()));
alter policy "Users can read their own profile" on public.profiles
  using (id = (select auth.uid()));
alter policy "Users can update their own profile" on public.profiles
  using (id = (select auth.uid()))
  with check (id = (select auth.uid()));

CREATE OR REPLACE FUNCTION app_private.session_has_ended(p_not_after timestamp with time zone, p_created_at timestamp with time zone, p_refreshed_at timestamp without time zone)
 RETURNS boolean
 LANGUAGE sql
 STABLE
 SET search_path TO ''
AS $function$
  select coalesce(p_not_after <= now(), false)
      or coalesce(p_created_at + nullif(app_private.auth_sessions_timebox(), interval '0') < now(), false)
      or coalesce(coalesce(p_refreshed_at at time zone 'UTC', p_created_at)
                  + nullif(app_private.auth_sessions_inactivity_timeout(), interval '0') < now(), false)
$function$;
comment on function app_private.session_has_ended(timestamptz, timestamptz, timestamp) is
  'Whether an auth.sessions row (its not_after, created_at, refreshed_at) has ended by time, as Supabase Auth''s Session.CheckValidity: past not_after, past created_at + app_private.auth_sessions_timebox(), or past refreshed_at (created_at while never refreshed) + app_private.auth_sessions_inactivity_timeout(). The time part of app_private.session_is_live() and what the push-token sweep releases.';

CREATE OR REPLACE FUNCTION app_private.session_is_live(p_session_id uuid, p_user_id uuid)
 RETURNS boolean
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO ''
AS $function$
begin
  -- A user learns nothing of another user's sessions.
  if current_setting('role') = 'authenticated' and p_user_id is distinct from auth.uid() then
    return false;
  end if;
  return exists (
    select 1
      from auth.sessions s
      join auth.users u on u.id = s.user_id
     where s.id = p_session_id
       and s.user_id = p_user_id
       and not app_private.session_has_ended(s.not_after, s.created_at, s.refreshed_at)
       and (u.banned_until is null or u.banned_until <= now())
       and u.deleted_at is null
  );
end
$function$;
comment on function app_private.session_is_live(uuid, uuid) is
  'The one rule for "this Supabase session still counts": its auth.sessions row exists for p_user_id and has not ended by time (app_private.session_has_ended: not_after, Supabase Auth''s time-box and inactivity timeout), and the user is neither banned (banned_until in the future) nor deleted (deleted_at). The api function''s session check, GET /v1/devices (active) and app_private.push_targets apply it. Security definer: authenticated cannot read auth.sessions; called as authenticated it answers only for the caller''s own sessions (false for anyone else''s). plpgsql, so its plan is cached per connection.';

CREATE OR REPLACE FUNCTION app_private.my_list_ids(p_min_role text DEFAULT 'viewer'::text)
 RETURNS uuid[]
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO ''
AS $function$
begin
  return (
    select coalesce(array_agg(m.list_id), '{}')
      from public.list_members m
     where m.user_id = (select auth.uid())
       and case p_min_role
             when 'owner' then m.role = 'owner'
             when 'editor' then m.role in ('owner', 'editor')
             else true
           end);
end;
$function$;
comment on function app_private.my_list_ids(text) is
  'The lists the caller is a member of with at least p_min_role (viewer < editor < owner). SECURITY DEFINER so that policies on list_members can use it without recursing into their own RLS; it only ever answers about the caller.';

CREATE OR REPLACE FUNCTION app_private.may_receive_poke(p_topic text)
 RETURNS boolean
 LANGUAGE sql
 STABLE
 SET search_path TO ''
AS $function$
  select case
    when p_topic = 'tidesync:user:' || (select auth.uid())::text then true
    when p_topic ~ '^tidesync:scope:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
      then substr(p_topic, 16)::uuid = any (app_private.visible_scope_ids())
    else false
  end;
$function$;
comment on function app_private.may_receive_poke(text) is
  'True when the caller may receive the pokes of a Realtime topic: their own tidesync:user:<id>, or tidesync:scope:<id> of a scope (list) the scope table''s policies let them read. Any other topic: false.';

CREATE OR REPLACE FUNCTION app_private.redeem_list_invite(p_code text)
 RETURNS uuid
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO ''
AS $function$
declare
  v_user uuid := auth.uid();
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
$function$;
comment on function app_private.redeem_list_invite(text) is
  'Redeems an invite code (trimmed, lower-cased) for the caller (auth.uid()) while its creator is an owner of the list who can sign in (app_private.invite_is_honoured): adds the membership or raises the caller''s role to the invite''s and marks the code used; a member whose role is already as good keeps it and leaves the code unused. Locks the list''s row (FOR KEY SHARE) before the code''s, as a delete of the list does: racing that delete, it waits and answers as for a wrong code. SECURITY DEFINER (the caller can see neither the invite nor insert memberships); reached only through public.accept_list_invite.';

drop function app_private.live_uid();
