-- What: public.profiles, one row per Supabase Auth user (display name and
-- onboarding state), created by an AFTER INSERT trigger on auth.users.
-- Why: the app reads and edits its own profile directly with supabase-js
-- through the Data API (so it lives in `public`), and POST /v1/auth/session
-- returns the onboarding state. The user may change only display_name and
-- completed_steps (column privileges); completed_at is derived by the
-- database: set when every onboarding step is done, null otherwise.
--
-- The onboarding steps are declared once for the database, in
-- app_private.onboarding_steps(); the TypeScript declaration
-- (functions/_shared/onboarding-steps.ts) is proven equal to it by
-- tests/integration/auth-session.test.ts.
--
-- rollback:
--   drop trigger if exists on_auth_user_created_create_profile on auth.users;
--   drop function if exists app_private.create_profile_for_new_user();
--   drop function if exists app_private.display_name_from_user_metadata(jsonb);
--   drop table if exists public.profiles;
--   drop function if exists app_private.maintain_profile_onboarding();
--   drop function if exists app_private.onboarding_steps();

-- ------------------------------------------------------------ onboarding steps
create function app_private.onboarding_steps()
returns text[]
language sql
immutable
parallel safe
security invoker
set search_path = ''
as $$
  select array['welcome', 'profile', 'notifications', 'first_sync']::text[]
$$;
comment on function app_private.onboarding_steps() is
  'The fixed, ordered list of onboarding steps (the one database declaration; functions/_shared/onboarding-steps.ts must agree, a test checks it). Used by the profiles check constraints and trigger.';
-- The check constraints of public.profiles call it as the writing role, so the
-- role that updates profiles (authenticated) needs EXECUTE; it only returns a constant.
revoke all on function app_private.onboarding_steps() from public, anon, authenticated, service_role;
grant execute on function app_private.onboarding_steps() to authenticated;

-- ------------------------------------------------------------------- profiles
create table public.profiles (
  id uuid primary key references auth.users (id) on delete cascade,
  display_name text
    constraint profiles_display_name_shape check (
      display_name is null
      or (char_length(display_name) between 1 and 80 and display_name = btrim(display_name))
    ),
  completed_steps text[] not null default '{}'
    constraint profiles_completed_steps_known check (completed_steps <@ app_private.onboarding_steps()),
  completed_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  constraint profiles_completed_at_iff_all_steps check (
    (completed_at is not null) = (completed_steps @> app_private.onboarding_steps())
  )
);
comment on table public.profiles is
  'One profile per Supabase Auth user, created by the on_auth_user_created_create_profile trigger. Reached by supabase-js through the Data API: a user reads and updates only their own row, and only display_name and completed_steps.';
comment on column public.profiles.id is 'The auth.users id (one profile per user).';
comment on column public.profiles.display_name is 'Name shown in the app; 1-80 characters without surrounding spaces, or null.';
comment on column public.profiles.completed_steps is
  'Onboarding steps the user has done, a subset of app_private.onboarding_steps(); the database stores them deduplicated in the declared order.';
comment on column public.profiles.completed_at is
  'Set by the database (trigger) when every onboarding step is done, null while any is missing; users cannot write it.';

alter table public.profiles enable row level security;
-- Supabase's default privileges gave anon, authenticated and service_role ALL: start from nothing.
revoke all on public.profiles from public, anon, authenticated, service_role;
grant select on public.profiles to authenticated, service_role;
grant update (display_name, completed_steps) on public.profiles to authenticated;

create policy "Users can read their own profile"
  on public.profiles for select to authenticated
  using (id = (select auth.uid()));
comment on policy "Users can read their own profile" on public.profiles is 'A signed-in user sees only their own profile; other users'' profiles are invisible.';

create policy "Users can update their own profile"
  on public.profiles for update to authenticated
  using (id = (select auth.uid()))
  with check (id = (select auth.uid()));
comment on policy "Users can update their own profile" on public.profiles is
  'A user changes only their own profile (and, by column privileges, only display_name and completed_steps).';

-- Derives completed_at and normalizes completed_steps on every write.
create function app_private.maintain_profile_onboarding()
returns trigger
language plpgsql
security invoker
set search_path = ''
as $$
declare
  all_steps constant text[] := app_private.onboarding_steps();
begin
  -- Unknown steps are left as sent so that the check constraint rejects them
  -- (silently dropping them would hide a client bug).
  if new.completed_steps <@ all_steps then
    new.completed_steps := array(
      select s.step
      from unnest(all_steps) with ordinality as s(step, position)
      where s.step = any (new.completed_steps)
      order by s.position
    );
  end if;
  if tg_op = 'UPDATE' then
    new.id := old.id;
    new.created_at := old.created_at;
    new.updated_at := now();
  end if;
  if new.completed_steps @> all_steps then
    new.completed_at := case when tg_op = 'UPDATE' then coalesce(old.completed_at, now()) else now() end;
  else
    new.completed_at := null;
  end if;
  return new;
end
$$;
comment on function app_private.maintain_profile_onboarding() is
  'BEFORE INSERT/UPDATE trigger of public.profiles: stores completed_steps deduplicated in declared order, sets completed_at when all steps are done (keeping the first completion time) and clears it otherwise, and keeps id/created_at and updated_at server-owned.';
revoke all on function app_private.maintain_profile_onboarding() from public, anon, authenticated, service_role;

create trigger profiles_maintain_onboarding
  before insert or update on public.profiles
  for each row execute function app_private.maintain_profile_onboarding();

-- ------------------------------------------------------------- signup trigger
create function app_private.display_name_from_user_metadata(meta jsonb)
returns text
language sql
immutable
security invoker
set search_path = ''
as $$
  select nullif(btrim(left(coalesce(meta ->> 'display_name', meta ->> 'full_name', meta ->> 'name', ''), 80)), '')
$$;
comment on function app_private.display_name_from_user_metadata(jsonb) is
  'The initial display name of a new user: user metadata display_name, full_name (OAuth providers) or name, trimmed to 80 characters; null when none.';
revoke all on function app_private.display_name_from_user_metadata(jsonb) from public, anon, authenticated, service_role;

-- Security definer: it runs as whichever role inserts into auth.users (the
-- Auth server's supabase_auth_admin, or the dashboard), which has no right to
-- write public.profiles. It writes exactly one row, for the new user's id.
create function app_private.create_profile_for_new_user()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  insert into public.profiles (id, display_name, created_at, updated_at)
  values (
    new.id,
    app_private.display_name_from_user_metadata(new.raw_user_meta_data),
    coalesce(new.created_at, now()),
    coalesce(new.created_at, now())
  )
  on conflict (id) do nothing;
  return null;
end
$$;
comment on function app_private.create_profile_for_new_user() is
  'AFTER INSERT trigger of auth.users (security definer, since Supabase Auth''s role cannot write public): creates the new user''s profile with the display name from user metadata (display_name, full_name or name) and the user''s creation time.';
revoke all on function app_private.create_profile_for_new_user() from public, anon, authenticated, service_role;

create trigger on_auth_user_created_create_profile
  after insert on auth.users
  for each row execute function app_private.create_profile_for_new_user();

-- Users that existed before this migration get their profile too.
insert into public.profiles (id, display_name, created_at, updated_at)
select
  u.id,
  app_private.display_name_from_user_metadata(u.raw_user_meta_data),
  coalesce(u.created_at, now()),
  coalesce(u.created_at, now())
from auth.users u
on conflict (id) do nothing;
