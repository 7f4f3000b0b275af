-- Down step of 20261126002800_complete_onboarding_steps.sql: the function goes;
-- the direct update of completed_steps, which the migration left alone, is
-- again the only write.
drop function public.complete_onboarding_steps(text[]);
