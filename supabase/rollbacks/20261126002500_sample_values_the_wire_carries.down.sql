-- Down step of 20261126002500_sample_values_the_wire_carries.sql: the three
-- checks go (NaN, ±Infinity positions and out-of-range due dates are taken
-- again); values the migration brought into range stay as they are.

alter table public.tasks
  drop constraint tasks_due_date_range,
  drop constraint tasks_position_finite;
alter table public.lists
  drop constraint lists_position_finite;
