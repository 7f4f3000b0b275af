-- What: app_private.refuse_another_users_list_id() (the trigger
-- personal_list_id_reserved, before insert on lists) lets an insert with
-- another user's id through only when the caller may lock the live list with
-- that id (FOR KEY SHARE, under its policies: an owner or an editor, not a
-- viewer), where 20261128008400 let any member through. The lock holds the
-- list until the transaction ends, so no delete can free the id before the
-- primary key is checked: the insert meets the key (a supabase-js upsert()
-- goes on to its update, which the policies decide); a list deleted earlier
-- in the same statement, or by a delete that committed while the lock
-- waited, leaves nothing to lock, and the id is refused as taken.
-- Why: the membership test (my_list_ids()) saw a list that was going: a
-- co-owner deleting the list and inserting it again in one statement (the
-- memberships go by the cascade at its end), or inserting it while their own
-- delete of it was not yet committed, created a list with another user's id,
-- theirs for good: its user could never create their personal list again.
-- A viewer, whom the UPDATE policy does not let lock the row, is refused as
-- any taken id, as before 20261128008400 (their upsert could only be refused).
-- Tests: tests/integration/personal-list-upsert.test.ts, pgTAP 115-personal-list-id.
-- Down step: supabase/rollbacks/20261128008600_personal_list_id_taken_only_with_its_list_locked.down.sql

create or replace function app_private.refuse_another_users_list_id()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
  -- Only for the API's role: the service role and the owner (the sign-up trigger creating
  -- a personal list) bypass RLS, as the policy did. Two conditions, not one `and`: Postgres
  -- checks EXECUTE on every function of an expression, and only authenticated may run
  -- is_another_users_id.
  if current_user = 'authenticated' then
    if app_private.is_another_users_id(new.id) then
      -- A member who may change the live list with that id meets its primary key, as for any
      -- list they share: a plain insert fails there, an upsert goes on to its update (the
      -- policies decide). Locked, so that the list stays until the key is checked.
      perform from public.lists l where l.id = new.id for key share;
      if not found then
        raise exception 'duplicate key value violates unique constraint "lists_pkey"'
          using errcode = 'unique_violation', constraint = 'lists_pkey',
                detail = format('Key (id)=(%s) already exists.', new.id);
      end if;
    end if;
  end if;
  return new;
end;
$$;
