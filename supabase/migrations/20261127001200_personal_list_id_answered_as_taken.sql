-- What: a list created as `authenticated` with another user's id (that user's
-- personal list's) is refused as an id that is taken: 23505 on lists_pkey, the
-- error a row of that id would raise, from a BEFORE INSERT trigger, instead of
-- the insert policy's 42501 (20261127000500); the policy is as it was before.
-- Why: Postgres checks a policy before the primary key, so with the policy a
-- user's id answered 42501 whether or not their personal list existed, while
-- any other taken id answers 23505: the answer told a user's id from any other
-- id (the push answered FORBIDDEN where a hidden id is NOT_FOUND), and telling
-- it apart in the push from another policy's refusal made every refused new
-- list NOT_FOUND. Taken is what such an id is: reserved for its user.
-- pgTAP 115-personal-list-id; tests/integration/personal-list-id.test.ts.
--
-- Down step: supabase/rollbacks/20261127001200_personal_list_id_answered_as_taken.down.sql.

create function app_private.refuse_another_users_list_id()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
  -- Only for the API's role: the service role and the owner (the sign-up trigger creating
  -- a personal list) bypass RLS, as the policy did.
  if current_user = 'authenticated' and app_private.is_another_users_id(new.id) then
    raise exception 'duplicate key value violates unique constraint "lists_pkey"'
      using errcode = 'unique_violation', constraint = 'lists_pkey',
            detail = format('Key (id)=(%s) already exists.', new.id);
  end if;
  return new;
end;
$$;
comment on function app_private.refuse_another_users_list_id() is
  'Trigger (before insert on lists, per row): as authenticated, a list with another user''s id (their personal list''s) is refused as that id being taken (23505 on lists_pkey), whether or not the list exists now, so the answer does not tell a user''s id from any other taken id.';
revoke all on function app_private.refuse_another_users_list_id() from public, anon, authenticated, service_role;

create trigger personal_list_id_reserved
  before insert on public.lists
  for each row execute function app_private.refuse_another_users_list_id();
comment on trigger personal_list_id_reserved on public.lists is
  'A personal list''s id (its user''s id) is taken for everyone else, even while that list is deleted.';

alter policy "Users can create lists" on public.lists
  with check (created_by = (select auth.uid()));
comment on policy "Users can create lists" on public.lists is 'Any signed-in user creates lists of their own (never with another user''s id: the trigger personal_list_id_reserved answers it as taken); the database makes them its owner.';
