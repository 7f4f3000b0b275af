-- Down step of 20261128008800_role_recheck_says_what_it_knows.sql: the message of
-- 20261127000400 ("no longer allows this write (it changed while the write ran)").

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
    raise exception 'your role in list % no longer allows this write (it changed while the write ran)', v_list
      using errcode = 'insufficient_privilege';
  end if;
end;
$$;
