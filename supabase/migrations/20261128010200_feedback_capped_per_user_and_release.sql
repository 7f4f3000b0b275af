-- What: a user sends at most app_private.max_feedback_per_user_and_release()
-- (50) feedback on one release. A trigger after each insert statement on
-- app_private.release_feedback refuses a statement that takes a (user,
-- release) past it, whole (23514, constraint max_feedback_per_user_and_release;
-- POST /v1/releases/{id}/feedback answers 403 FORBIDDEN). The pairs are locked
-- in order (an advisory lock each) before they are counted, so concurrent
-- posts cannot pass the cap together. The indexes follow the two reads:
-- (release_id, created_at, id) for the release manager's keyset pages, and
-- (user_id, release_id) for the count.
-- Why: anyone who may see a release (every user, on an `everyone` channel)
-- could post feedback without bound but the rate limit's (120 a minute), and
-- a few accounts buried the testers' reports.
-- Not done: feedback already over the cap stays (the next insert of that pair
-- is refused); an insert under REPEATABLE READ or SERIALIZABLE may pass the cap
-- with a concurrent one (its snapshot predates the lock): the API runs READ
-- COMMITTED. Updates are not checked: no API role may update feedback.
-- Tests: pgTAP 173-feedback-capped-per-user-and-release;
-- tests/integration/release-feedback-cap.test.ts, release-feedback-pages.test.ts.
-- Down step: supabase/rollbacks/20261128010200_feedback_capped_per_user_and_release.down.sql

create function app_private.max_feedback_per_user_and_release()
returns integer
language sql
immutable
parallel safe
set search_path = ''
as $$
  select 50
$$;
comment on function app_private.max_feedback_per_user_and_release() is
  'How many feedback one user may send on one release: the trigger release_feedback_capped refuses more (23514, constraint max_feedback_per_user_and_release), for every insert; npm run generate copies it into MAX_FEEDBACK_PER_USER_AND_RELEASE (GET /v1/meta publishes it). Change it by replacing this function in a migration, then npm run generate.';
revoke execute on function app_private.max_feedback_per_user_and_release() from public;

create function app_private.refuse_feedback_over_cap()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_max constant integer := app_private.max_feedback_per_user_and_release();
  v_pair record;
begin
  -- Pairs in order, each locked before it is counted: concurrent inserts of a
  -- pair run in turn (the count sees what the one before committed), and two
  -- statements of several pairs cannot deadlock.
  for v_pair in
    select distinct n.release_id, n.user_id from new_rows n order by n.release_id, n.user_id
  loop
    perform pg_advisory_xact_lock(hashtextextended(
      'app_private.release_feedback:' || v_pair.release_id::text || ':' || v_pair.user_id::text, 0));
    if (select count(*) from app_private.release_feedback f
         where f.user_id = v_pair.user_id and f.release_id = v_pair.release_id) > v_max then
      raise exception 'a user sends at most % feedback on one release', v_max
        using errcode = 'check_violation', constraint = 'max_feedback_per_user_and_release',
              schema = 'app_private', table = 'release_feedback';
    end if;
  end loop;
  return null;
end;
$$;
comment on function app_private.refuse_feedback_over_cap() is
  'Trigger of app_private.release_feedback (after each insert statement): a (user, release) the statement wrote feedback for has at most app_private.max_feedback_per_user_and_release() of it, else the statement is refused (23514, constraint max_feedback_per_user_and_release). Pairs are locked in order (an advisory lock each) before they are counted. SECURITY DEFINER: the count is of every row of the pair, whatever the inserting role may read. No API role may call it.';
revoke execute on function app_private.refuse_feedback_over_cap() from public;

create trigger release_feedback_capped
  after insert on app_private.release_feedback
  referencing new table as new_rows
  for each statement execute function app_private.refuse_feedback_over_cap();
comment on trigger release_feedback_capped on app_private.release_feedback is
  'A user sends at most app_private.max_feedback_per_user_and_release() feedback on one release, however it is inserted (app_private.refuse_feedback_over_cap).';

drop index app_private.release_feedback_release_id_idx;
create index release_feedback_release_id_idx on app_private.release_feedback (release_id, created_at, id);
comment on index app_private.release_feedback_release_id_idx is
  'Feedback of one release by (created_at, id): the release manager''s keyset pages, newest first (GET /v1/releases/{id}/feedback); covers the foreign key.';
drop index app_private.release_feedback_user_id_idx;
create index release_feedback_user_id_idx on app_private.release_feedback (user_id, release_id);
comment on index app_private.release_feedback_user_id_idx is
  'The read policy (own feedback), the foreign key to auth.users, and the cap''s count per (user, release).';
