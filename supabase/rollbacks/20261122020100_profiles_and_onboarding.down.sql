-- Down step of 20261122020100_profiles_and_onboarding.sql.
-- auth.users belongs to Supabase Auth: the owner role may create a trigger on
-- it (TRIGGER privilege) but not drop one by name (that needs ownership).
-- Dropping our trigger function with CASCADE drops the trigger that depends
-- on it, which needs ownership of the function only; nothing else depends on it.
drop function if exists app_private.create_profile_for_new_user() cascade;
drop function if exists app_private.display_name_from_user_metadata(jsonb);
drop table if exists public.profiles;
drop function if exists app_private.maintain_profile_onboarding();
drop function if exists app_private.onboarding_steps();
