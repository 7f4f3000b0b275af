-- What: an invite code works only while the Supabase session that created it
-- still counts. list_invites.created_session records that session (the
-- token's session_id claim, as a default: users cannot write or read it), and
-- app_private.invite_is_honoured(list, creator, session) adds to "the creator
-- is an owner who can sign in" that the session's auth.sessions row is still
-- there for the creator and has not ended by time (app_private.session_has_ended),
-- the rule of app_private.session_is_live. So signing a session out (another
-- session's account deletion request, DELETE /v1/devices/{id}, DELETE
-- /v1/auth/session, supabase.auth.signOut() in any scope) withdraws the codes
-- it created, for good: they fail like a wrong code (P0002) and stop counting
-- towards the cap of pending invites. A code written without a session (by
-- the table's owner, or before this migration) names none and keeps the
-- creator's rule alone.
-- Why: migration 20261128001800 kept a signed-out session from creating an
-- invite, but the codes it had created while live kept working for up to 30
-- days: an owner code a stolen session minted before the user's deletion
-- request (or remote sign-out) still let the thief's own account join, read
-- the list and, at the purge, be handed it. invite_is_honoured asked only
-- whether the creator is an owner who can sign in, and a user whose other
-- sessions were signed out still can.
-- Not done: the deletion request neither deletes nor suspends the caller's
-- codes (the session rule already ends those of every session it signs out,
-- also of an invite committing at the same moment; the requesting session's
-- own codes are the user's, and cancelling loses nothing: account-deletion.md).
-- invite_is_honoured keeps session_is_live's session part written out: that
-- function answers false for another user's session when called as
-- authenticated (it is granted to users), and the redeemer is another user.
-- pgTAP 137-list-invites-follow-their-session; tests/integration/data-api-after-sign-out.test.ts;
-- docs/security-model.md, docs/account-deletion.md, docs/devices-and-sessions.md, client/README.md.
-- Rollback: supabase/rollbacks/20261128002400_invites_follow_their_session.down.sql

alter table app_private.list_invites
  add column created_session uuid default nullif(auth.jwt() ->> 'session_id', '')::uuid;
comment on column app_private.list_invites.created_session is
  'The Supabase session (auth.sessions.id, the token''s session_id claim) that created the invite: the code works only while it counts (app_private.invite_is_honoured). No foreign key: the id outlives its session, which is what withdraws the code. Null for an invite written without a session (the table''s owner, or before migration 20261128002400). Neither readable nor writable by users.';

create function app_private.invite_is_honoured(p_list_id uuid, p_created_by uuid, p_created_session uuid)
returns boolean
language plpgsql
stable
set search_path = ''
as $$
begin
  return exists (select 1 from public.list_members m
                  where m.list_id = p_list_id and m.user_id = p_created_by and m.role = 'owner')
     and not app_private.cannot_sign_in(p_created_by)
     -- The session that created it still counts (session_is_live's rule, whose
     -- guard would refuse the redeemer, another user): a stolen session's
     -- codes go when it is signed out.
     and (p_created_session is null
          or exists (select 1 from auth.sessions s
                      where s.id = p_created_session
                        and s.user_id = p_created_by
                        and not app_private.session_has_ended(s.not_after, s.created_at, s.refreshed_at)));
end;
$$;
comment on function app_private.invite_is_honoured(uuid, uuid, uuid) is
  'The one rule for "an invite code works": p_created_by is an owner of p_list_id who can sign in (app_private.cannot_sign_in), and the session that created it (p_created_session, list_invites.created_session; none for a code written without one) still counts: its auth.sessions row exists for p_created_by and has not ended by time (app_private.session_has_ended, as app_private.session_is_live). redeem_list_invite honours only such codes and the cap of pending invites counts only those (pending_list_invites). Not callable by any API role; reads auth.sessions, so only from the security definer functions that call it.';
revoke all on function app_private.invite_is_honoured(uuid, uuid, uuid) from public, anon, authenticated, service_role;

create or replace function app_private.pending_list_invites(p_list_id uuid)
returns integer
language sql
stable
security definer
set search_path = ''
as $$
  select count(*)::integer
    from app_private.list_invites i
   where i.list_id = p_list_id
     -- only for an owner, who reads the list's invites anyway (their select policy)
     and p_list_id = any (app_private.my_list_ids('owner'))
     and i.used_at is null
     and i.expires_at > now()
     and app_private.invite_is_honoured(i.list_id, i.created_by, i.created_session)
$$;
comment on function app_private.pending_list_invites(uuid) is
  'How many of the list''s invites are pending and would be honoured (unused, unexpired, app_private.invite_is_honoured: their creator an owner who can sign in, their creating session still counting): what the cap of create_list_invite counts. 0 unless the caller owns the list. SECURITY DEFINER: whether a creator can sign in and their session counts is read from auth.users and auth.sessions.';

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
     -- the owner who created it still is one and can sign in, and the session
     -- that created it still counts (a removed, soft-deleted or banned owner's
     -- codes, and a signed-out session's, admit nobody)
     and app_private.invite_is_honoured(i.list_id, i.created_by, i.created_session)
     for update of i;
  if v_invite is null then
    -- wrong, used and expired codes, and those of a former owner, one who
    -- cannot sign in or a signed-out session, get the same answer
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
  'Redeems an invite code (trimmed, lower-cased) for the caller while the code is honoured (app_private.invite_is_honoured: its creator an owner of the list who can sign in, the session that created it still counting) and the caller''s own session counts (app_private.live_uid(): else 42501, as for anon): adds the membership or raises the caller''s role to the invite''s and marks the code used; a member whose role is already as good keeps it and leaves the code unused. Locks the list''s row (FOR KEY SHARE) before the code''s, as a delete of the list does: racing that delete, it waits and answers as for a wrong code. SECURITY DEFINER (the caller can see neither the invite nor insert memberships); reached only through public.accept_list_invite.';

drop function app_private.invite_is_honoured(uuid, uuid);

comment on function public.create_list_invite(uuid, text, interval) is
  'Data API: an owner creates a single-use invite code (64 hex characters) to the list with the given role (owner, editor, viewer; any other is 22023), valid for p_valid_for (default 7 days, at most 30) and while the calling session counts (list_invites.created_session: signing it out withdraws the code); at most app_private.max_pending_invites_per_list() pending invites per list that would be honoured (app_private.pending_list_invites: their creator still an owner who can sign in, their session still counting; 23514).';
