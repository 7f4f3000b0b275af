-- Down step of 20261128005000_invites_bounded_by_the_table.sql: the table's
-- triggers and app_private.invite_validity_bounds() go; create_list_invite()
-- counts and caps pending invites itself again, through
-- pending_list_invites() as 20261128002400 made it, and checks p_valid_for
-- against its own literal bounds, as 20261128004600 made it; the comments of
-- max_pending_invites_per_list() and invite_is_honoured() as before. Unused
-- invites the up step cut to 30 days keep their shorter expiry, and the dead
-- codes it withdrew stay withdrawn (nothing records them).

drop trigger list_invites_open_capped_on_update on app_private.list_invites;
drop trigger list_invites_open_capped_on_insert on app_private.list_invites;
drop trigger list_invites_validity_bounded on app_private.list_invites;
drop function app_private.refuse_open_invites_over_cap();
drop function app_private.refuse_invite_validity_out_of_bounds();

create function app_private.pending_list_invites(p_list_id uuid)
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
revoke all on function app_private.pending_list_invites(uuid) from public, anon, authenticated, service_role;
grant execute on function app_private.pending_list_invites(uuid) to authenticated;

create or replace function public.create_list_invite(p_list_id uuid, p_role text default 'editor', p_valid_for interval default interval '7 days')
returns text
language plpgsql
volatile
security invoker
set search_path = ''
as $$
declare
  v_code text := replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', '');
  -- What is checked and what is added: its length in seconds (a month 30
  -- days, a year 365.25, a day 24 hours). Added as an interval, its months and
  -- days were calendar ones in the session's time zone: a mix of them passed
  -- the check with another real validity.
  v_seconds numeric := extract(epoch from p_valid_for);
begin
  if p_role is null or p_role not in ('owner', 'editor', 'viewer') then
    raise exception 'p_role must be owner, editor or viewer' using errcode = 'invalid_parameter_value';
  end if;
  -- At least a minute: the cap counts an invite only while it is pending, so
  -- shorter ones let an owner create rows at the rate of their requests.
  if v_seconds is null or v_seconds < 60 or v_seconds > 30 * 86400 then
    raise exception 'p_valid_for must be between 1 minute and 30 days' using errcode = 'invalid_parameter_value';
  end if;
  -- One create of a list's invites at a time, so that two cannot pass the cap together.
  perform pg_advisory_xact_lock(hashtextextended('app_private.list_invites:' || p_list_id::text, 0));
  -- Only codes that redeem would honour count (a non-owner counts none, and the insert below refuses them).
  if app_private.pending_list_invites(p_list_id) >= app_private.max_pending_invites_per_list() then
    raise exception 'a list has at most % pending invites; they stop counting once used or expired, and those of a former owner, or of one who cannot sign in, do not count', app_private.max_pending_invites_per_list()
      using errcode = 'check_violation', constraint = 'max_pending_invites_per_list';
  end if;
  -- As the caller: the insert policy lets only an owner of the list through.
  insert into app_private.list_invites (list_id, role, code_sha256, expires_at)
  values (p_list_id, p_role, sha256(convert_to(v_code, 'UTF8')), now() + make_interval(secs => v_seconds));
  return v_code;
exception
  when insufficient_privilege or foreign_key_violation then
    -- the same answer for a list that does not exist and one the caller does not own
    raise exception 'no such list, or you are not its owner' using errcode = 'insufficient_privilege';
end;
$$;
comment on function public.create_list_invite(uuid, text, interval) is
  'Data API: an owner creates a single-use invite code (64 hex characters) to the list with the given role (owner, editor, viewer; any other is 22023), valid for the length of p_valid_for (default 7 days; extract(epoch from p_valid_for): a month counts 30 days, a year 365.25, a day 24 hours; at least 1 minute and at most 30 days, else 22023) and while the calling session counts (list_invites.created_session: signing it out withdraws the code); at most app_private.max_pending_invites_per_list() pending invites per list that would be honoured (app_private.pending_list_invites: their creator still an owner who can sign in, their session still counting; 23514). One that expires unused is deleted by the next run of app_private.purge_sync_retention.';

drop function app_private.invite_validity_bounds();

comment on function app_private.max_pending_invites_per_list() is
  'How many pending (unused, unexpired) invites one list may have: public.create_list_invite refuses more (23514, constraint max_pending_invites_per_list). Change it by replacing this function in a migration.';

comment on function app_private.invite_is_honoured(uuid, uuid, uuid) is
  'The one rule for "an invite code works": p_created_by is an owner of p_list_id who can sign in (app_private.cannot_sign_in), and the session that created it (p_created_session, list_invites.created_session; none for a code written without one) still counts: its auth.sessions row exists for p_created_by and has not ended by time (app_private.session_has_ended, as app_private.session_is_live). redeem_list_invite honours only such codes and the cap of pending invites counts only those (pending_list_invites). Not callable by any API role; reads auth.sessions, so only from the security definer functions that call it.';
