-- What: public.create_list_invite takes p_valid_for as its length in
-- seconds, extract(epoch from p_valid_for) (a month 30 days, a year 365.25
-- days, a day 24 hours), checks that length (at least 1 minute, at most 30
-- days, else 22023 as before) and adds that same length to now(): the expiry
-- is exactly the validity that was checked, on every date and in every time
-- zone.
-- Why: it compared the interval (Postgres counts a month as 30 days there)
-- but added it as calendar months and days, so a mix of months and days
-- passed with a very different real validity. On 2026-11-28
-- '-1 mon 31 days 1 microsecond' passed as 1 day and expired after 1
-- microsecond: 300 such creates as one owner left 300 rows the cap of
-- pending invites never counted, the pile-up 20261128003700 meant to end.
-- '1200 mons -35970 days' passed as 30 days and stored an invite valid 554
-- days ('120000 mons -3599970 days': about 143 years), and one whose months
-- overflowed a timestamp failed with 22008 instead of 22023. Days added to a
-- timestamptz also follow the session's time zone (PostgREST sets one per
-- request): over a change of the clocks '1 day -23:00:00' (an hour) expired
-- at once. A length in seconds added to a timestamp has none of these
-- (make_interval(secs => ...) holds no days or months).
-- Tests: pgTAP 155-list-invites-validity-is-a-length (and 113, 148);
-- docs/security-model.md.
-- Down step: supabase/rollbacks/20261128004600_invite_validity_is_a_length.down.sql.

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
