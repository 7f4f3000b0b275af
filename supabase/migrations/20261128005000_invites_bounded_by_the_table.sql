-- What: the bounds of invites are kept by app_private.list_invites itself, for
-- every write, not only by public.create_list_invite:
-- - validity: a trigger before each insert, and each update of created_at or
--   expires_at, refuses an invite that does not expire between 1 minute and
--   30 days after it is created (23514, constraint list_invites_validity_bounded,
--   "an invite must expire between 1 minute and 30 days after it is
--   created"). The bounds live in app_private.invite_validity_bounds(), which
--   the rpc reads too (it still answers 22023 for its parameter first);
-- - open invites: triggers after each insert and update statement refuse a
--   list more than app_private.max_pending_invites_per_list() (100) open
--   (unused, unexpired) invites, with the error the rpc gave (23514, constraint
--   max_pending_invites_per_list). Before refusing, they withdraw (delete) the
--   list's open codes that no longer work (app_private.invite_is_honoured:
--   their creator no longer an owner who can sign in, or their session signed
--   out): those do not count, as before, but no longer stay as rows either.
--   The rpc's own count (app_private.pending_list_invites) goes.
-- - unused invites valid longer than 30 days (created before 20261128004600
--   with a mix of months and days) now expire 30 days after their creation.
-- Why: authenticated may insert into the table (the security invoker rpc
-- needs it), and such an insert took any expires_at (100 years) and any number
-- of invites. Through the rpc alone the cap counted only codes that work, so
-- an owner who signed out left 100 rows that no longer counted and, signed in
-- again, created 100 more, as often as Supabase Auth let them sign in: rows
-- without bound, by one user, that no rate limit of ours sees.
-- Not done: a concurrent create under REPEATABLE READ or SERIALIZABLE may
-- still pass the cap (its snapshot predates the lock), as before; PostgREST
-- and the rpc run READ COMMITTED.
-- Tests: pgTAP 159-list-invites-bounded-by-the-table (and 113, 116, 137, 148,
-- 155, 211); docs/security-model.md, docs/retention.md, client/README.md.
-- Down step: supabase/rollbacks/20261128005000_invites_bounded_by_the_table.down.sql.

create function app_private.invite_validity_bounds(out shortest interval, out longest interval, out described text)
language sql
immutable
parallel safe
set search_path = ''
as $$
  -- described says the same as the two lengths: change them together
  select interval '1 minute', interval '30 days', 'between 1 minute and 30 days'
$$;
comment on function app_private.invite_validity_bounds() is
  'How long an invite may be valid, the one place: from created_at to expires_at at least shortest and at most longest (described: the same in words, for errors). The trigger list_invites_validity_bounded refuses others (23514); public.create_list_invite checks p_valid_for against them first (22023). Shorter than a minute, an invite would leave the cap of open invites at once. Change it by replacing this function in a migration.';
revoke all on function app_private.invite_validity_bounds() from public, anon, authenticated, service_role;
grant execute on function app_private.invite_validity_bounds() to authenticated;

-- Unused invites a mix of months and days made valid longer (20261128004600): cut to the bound, before the triggers exist.
update app_private.list_invites i
   set expires_at = i.created_at + b.longest
  from app_private.invite_validity_bounds() b
 where i.used_at is null and i.expires_at - i.created_at > b.longest;

-- ------------------------------------------------------------------- validity
create function app_private.refuse_invite_validity_out_of_bounds()
returns trigger
language plpgsql
security invoker
set search_path = ''
as $$
declare
  v_bounds record;
begin
  select b.shortest, b.longest, b.described into v_bounds from app_private.invite_validity_bounds() b;
  if new.expires_at - new.created_at not between v_bounds.shortest and v_bounds.longest then
    raise exception 'an invite must expire % after it is created', v_bounds.described
      using errcode = 'check_violation', constraint = 'list_invites_validity_bounded',
            schema = 'app_private', table = 'list_invites';
  end if;
  return new;
end;
$$;
comment on function app_private.refuse_invite_validity_out_of_bounds() is
  'Trigger of app_private.list_invites (list_invites_validity_bounded): refuses (23514, constraint list_invites_validity_bounded) an invite whose expires_at is not within app_private.invite_validity_bounds() of its created_at, whoever writes it. Security invoker: it reads nothing but the bounds.';
revoke all on function app_private.refuse_invite_validity_out_of_bounds() from public, anon, authenticated, service_role;

create trigger list_invites_validity_bounded
  before insert or update of created_at, expires_at on app_private.list_invites
  for each row execute function app_private.refuse_invite_validity_out_of_bounds();
comment on trigger list_invites_validity_bounded on app_private.list_invites is
  'An invite expires within app_private.invite_validity_bounds() of its creation, however it is written (a direct insert as authenticated included).';

-- ------------------------------------------------------------------- open invites
create function app_private.refuse_open_invites_over_cap()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_max constant integer := app_private.max_pending_invites_per_list();
  v_list uuid;
  v_open integer;
  v_withdrawn integer;
begin
  -- Lists in id order, each locked before it is counted: the writes of one list
  -- run in turn (the lock the rpc took before), and two statements that write
  -- several lists cannot deadlock.
  for v_list in
    select distinct n.list_id from new_rows n where n.used_at is null and n.expires_at > now() order by n.list_id
  loop
    perform pg_advisory_xact_lock(hashtextextended('app_private.list_invites:' || v_list::text, 0));
    select count(*)::integer into v_open
      from app_private.list_invites i
     where i.list_id = v_list and i.used_at is null and i.expires_at > now();
    continue when v_open <= v_max;
    -- Over the cap: the open codes that no longer work (their creator no longer
    -- an owner who can sign in, their session signed out) make way first, all
    -- but those this statement wrote.
    delete from app_private.list_invites i
     where i.list_id = v_list and i.used_at is null and i.expires_at > now()
       and i.id not in (select n.id from new_rows n)
       and not app_private.invite_is_honoured(i.list_id, i.created_by, i.created_session);
    get diagnostics v_withdrawn = row_count;
    if v_open - v_withdrawn > v_max then
      raise exception 'a list has at most % pending invites; they stop counting once used or expired, and those of a former owner, or of one who cannot sign in, do not count', v_max
        using errcode = 'check_violation', constraint = 'max_pending_invites_per_list',
              schema = 'app_private', table = 'list_invites';
    end if;
  end loop;
  return null;
end;
$$;
comment on function app_private.refuse_open_invites_over_cap() is
  'Trigger of app_private.list_invites (after each insert and update statement): a list the statement wrote an open (unused, unexpired) invite to keeps at most app_private.max_pending_invites_per_list() open invites. Over it, the list''s open codes that no longer work (not app_private.invite_is_honoured) are withdrawn (deleted; not those the statement wrote), then the statement is refused if still over (23514, constraint max_pending_invites_per_list). Lists are locked in id order (an advisory lock per list) before they are counted. SECURITY DEFINER: whether a code works is read from auth.users and auth.sessions, and the caller may see only its own lists'' invites (only an owner, or the table''s owner, gets this far: RLS refuses other writes first). No API role may call it.';
revoke all on function app_private.refuse_open_invites_over_cap() from public, anon, authenticated, service_role;

-- Two triggers: a transition table belongs to one event.
create trigger list_invites_open_capped_on_insert
  after insert on app_private.list_invites
  referencing new table as new_rows
  for each statement execute function app_private.refuse_open_invites_over_cap();
comment on trigger list_invites_open_capped_on_insert on app_private.list_invites is
  'A list keeps at most app_private.max_pending_invites_per_list() open invites, however they are inserted (app_private.refuse_open_invites_over_cap).';
create trigger list_invites_open_capped_on_update
  after update on app_private.list_invites
  referencing new table as new_rows
  for each statement execute function app_private.refuse_open_invites_over_cap();
comment on trigger list_invites_open_capped_on_update on app_private.list_invites is
  'Nor does an update reopen or move invites past it (app_private.refuse_open_invites_over_cap; a redeem, which closes one, counts nothing).';

comment on function app_private.max_pending_invites_per_list() is
  'How many open (unused, unexpired) invites one list may have: the triggers list_invites_open_capped_on_insert and _on_update refuse more (23514, constraint max_pending_invites_per_list) after withdrawing the list''s codes that no longer work, for every write (public.create_list_invite included). Change it by replacing this function in a migration.';

comment on function app_private.invite_is_honoured(uuid, uuid, uuid) is
  'The one rule for "an invite code works": p_created_by is an owner of p_list_id who can sign in (app_private.cannot_sign_in), and the session that created it (p_created_session, list_invites.created_session; none for a code written without one) still counts: its auth.sessions row exists for p_created_by and has not ended by time (app_private.session_has_ended, as app_private.session_is_live). redeem_list_invite honours only such codes, and the cap of open invites (refuse_open_invites_over_cap) withdraws the others to make room. Not callable by any API role; reads auth.sessions, so only from the security definer functions that call it.';

-- ------------------------------------------------------------------- the rpc
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
  -- days, a year 365.25, a day 24 hours), 20261128004600.
  v_seconds numeric := extract(epoch from p_valid_for);
  v_bounds record;
begin
  if p_role is null or p_role not in ('owner', 'editor', 'viewer') then
    raise exception 'p_role must be owner, editor or viewer' using errcode = 'invalid_parameter_value';
  end if;
  -- The table refuses the same (23514); the parameter is named first.
  select b.shortest, b.longest, b.described into v_bounds from app_private.invite_validity_bounds() b;
  if v_seconds is null or v_seconds < extract(epoch from v_bounds.shortest) or v_seconds > extract(epoch from v_bounds.longest) then
    raise exception 'p_valid_for must be %', v_bounds.described using errcode = 'invalid_parameter_value';
  end if;
  -- As the caller: the insert policy lets only an owner of the list through,
  -- and the table caps its open invites (list_invites_open_capped_on_insert).
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
  'Data API: an owner creates a single-use invite code (64 hex characters) to the list with the given role (owner, editor, viewer; any other is 22023), valid for the length of p_valid_for (default 7 days; extract(epoch from p_valid_for): a month counts 30 days, a year 365.25, a day 24 hours; within app_private.invite_validity_bounds(), 1 minute to 30 days, else 22023) and while the calling session counts (list_invites.created_session: signing it out withdraws the code); at most app_private.max_pending_invites_per_list() open invites per list, kept by the table (23514; codes that no longer work are withdrawn to make room). One that expires unused is deleted by the next run of app_private.purge_sync_retention.';

drop function app_private.pending_list_invites(uuid);
