-- What: the sample app's float and date columns hold only values the sync
-- wire carries. lists.position and tasks.position are finite (no NaN,
-- Infinity or -Infinity: constraints lists_position_finite and
-- tasks_position_finite), and tasks.due_date is a date of the years 0001 to
-- 9999 AD (tasks_due_date_range: no 'infinity', '-infinity', BC dates or
-- years past 9999), the dates `YYYY-MM-DD` writes. Rows already holding such
-- a value are first brought into range, as a write of the owner (the sync
-- triggers number it, so devices pull the new value): a NaN position becomes
-- 0 (the column's default), ±Infinity the largest finite double of its sign
-- (±1.7976931348623157e308: it still sorts first or last), a due date before
-- 0001-01-01 (BC, '-infinity') 0001-01-01, one after 9999-12-31 ('infinity',
-- 12345-01-01) 9999-12-31.
-- Why: Postgres takes those values from SQL and the Data API (a supabase-js
-- update of position to 'NaN', of due_date to 'infinity'), and a pull lists
-- them as to_json prints them: "NaN" and "-Infinity", strings in a number
-- field, and "infinity", "0044-03-15 BC", "12345-01-01" in a date field.
-- GET /v1/meta publishes number and date, so no client reads them as such
-- nor can push them back (JSON has no NaN or Infinity; its z.number() and
-- z.iso.date() refuse them). The push never took them; now the table, the
-- authority for every writer, refuses them too: a write as authenticated fails
-- 23514 naming the constraint (PostgREST: HTTP 400), and `npm run generate`
-- maps each constraint to its column, so a refusal the push meets is that
-- op's check_failed on /ops/<i>/data/<column>. docs/security-model.md
-- ("Making a new table syncable") asks the same of an app's own float, date
-- and timestamp columns. created_at is left alone: no API role may write it
-- and its default is now().
-- Tested by pgTAP 114-sample-values-the-wire-carries.
--
-- Down step: supabase/rollbacks/20261126002500_sample_values_the_wire_carries.down.sql
-- (drops the three constraints; values brought into range stay as they are).

-- The checks first, for new writes only (not valid), then the rows already there are brought
-- into range, then checked: no write can slip a NaN in between (the CLI adds no transaction).
alter table public.lists
  add constraint lists_position_finite check (position not in ('NaN', 'Infinity', '-Infinity')) not valid;
alter table public.tasks
  add constraint tasks_position_finite check (position not in ('NaN', 'Infinity', '-Infinity')) not valid,
  add constraint tasks_due_date_range check (due_date between '0001-01-01' and '9999-12-31') not valid;

update public.lists
   set position = case when position = 'NaN' then 0 when position > 0 then 1.7976931348623157e308 else -1.7976931348623157e308 end
 where position in ('NaN', 'Infinity', '-Infinity');
update public.tasks
   set position = case when position = 'NaN' then 0 when position > 0 then 1.7976931348623157e308 else -1.7976931348623157e308 end
 where position in ('NaN', 'Infinity', '-Infinity');
update public.tasks
   set due_date = case when due_date < '0001-01-01' then date '0001-01-01' else date '9999-12-31' end
 where not (due_date between '0001-01-01' and '9999-12-31');

alter table public.lists validate constraint lists_position_finite;
alter table public.tasks validate constraint tasks_position_finite;
alter table public.tasks validate constraint tasks_due_date_range;

comment on constraint lists_position_finite on public.lists is
  'A finite number: JSON has no NaN or Infinity, so a pull would list them as strings in a number field (GET /v1/meta: number).';
comment on constraint tasks_position_finite on public.tasks is
  'A finite number: JSON has no NaN or Infinity, so a pull would list them as strings in a number field (GET /v1/meta: number).';
comment on constraint tasks_due_date_range on public.tasks is
  'A date of the years 0001 to 9999 AD, what the wire''s YYYY-MM-DD writes: no infinity, -infinity, BC dates or five-digit years.';
