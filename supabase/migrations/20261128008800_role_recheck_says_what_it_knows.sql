-- What: app_private.require_list_role (the recheck triggers' judge of a write by the writer's
-- role as last committed) says "does not allow this write (as last committed: it may have
-- changed while the write waited)", with a hint naming the other cause, instead of "no longer
-- allows this write (it changed while the write ran)".
-- Why: the message asserted a change of role that may not have happened. A table whose policy
-- lets in a role its recheck trigger refuses (a policy written for 'viewer' where the trigger
-- says 'editor', docs/security-model.md step 5) answered every such write with it, and sent the
-- DBA hunting a race instead of the typo in their policy.
-- Tests: tests/integration/role-loss-races.test.ts, tests/integration/sync-recipe-rechecks.test.ts.
-- Down step: supabase/rollbacks/20261128008800_role_recheck_says_what_it_knows.down.sql

create or replace function app_private.require_list_role(p_lists uuid[], p_min_role text)
returns void
language plpgsql
volatile
security definer
set search_path = ''
as $$
declare
  v_list uuid;
begin
  if current_setting('transaction_isolation') <> 'read committed' then
    perform 1 from public.list_members m
     where m.user_id = (select auth.uid()) and m.list_id = any (p_lists)
     order by m.list_id
       for share;
  end if;
  -- VOLATILE: this statement's snapshot (READ COMMITTED) includes what committed while the
  -- write waited; my_list_ids() is the policies' own rule.
  select l into v_list
    from unnest(p_lists) l, (select app_private.my_list_ids(p_min_role) as ids) mine
   where l <> all (mine.ids)
   limit 1;
  if v_list is not null then
    raise exception 'your role in list % does not allow this write (as last committed: it may have changed while the write waited)', v_list
      using errcode = 'insufficient_privilege',
            hint = 'If no role changed, the table''s policy lets in a role its writer_role_rechecked_on_* trigger refuses (docs/security-model.md, step 3).';
  end if;
end;
$$;
