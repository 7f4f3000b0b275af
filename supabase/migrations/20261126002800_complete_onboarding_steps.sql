-- What: public.complete_onboarding_steps(p_steps text[]), the Data API's way
-- to mark onboarding steps done: adds them to the caller's stored steps and
-- answers the onboarding state (completed_steps, completed_at).
-- Why: the documented write replaced the whole array,
-- update({ completed_steps: [...] }), with no version, so two devices of one
-- user marking different steps from what each had read lost one of them, and
-- a device that had not seen the last step cleared completed_at again. The
-- append is one UPDATE reading the row it changes (READ COMMITTED re-reads a
-- row a concurrent writer changed), so concurrent calls add up; the existing
-- trigger deduplicates, orders and derives completed_at, the check constraint
-- refuses an unknown step (23514) as before. SECURITY INVOKER: it is the
-- caller's own update under the same RLS policies and column privilege
-- (completed_steps) as the direct write, which stays, for resetting.
-- pgTAP 300-profiles (per role: owner, another user, anon, service_role).
-- Down step: supabase/rollbacks/20261126002800_complete_onboarding_steps.down.sql

create function public.complete_onboarding_steps(p_steps text[])
returns table (completed_steps text[], completed_at timestamptz)
language sql
volatile
security invoker
set search_path = ''
as $$
  update public.profiles p
     set completed_steps = p.completed_steps || coalesce(p_steps, '{}')
   where p.id = (select auth.uid())
  returning p.completed_steps, p.completed_at
$$;
comment on function public.complete_onboarding_steps(text[]) is
  'Data API: marks onboarding steps done for the caller, keeping the steps already stored (two devices marking different steps both count), and returns completed_steps and completed_at. Unknown steps fail 23514. Runs as the caller (RLS, column privilege on completed_steps).';
revoke all on function public.complete_onboarding_steps(text[]) from public, anon, authenticated, service_role;
grant execute on function public.complete_onboarding_steps(text[]) to authenticated;
