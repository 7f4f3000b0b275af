-- Down step of 20261127000600_ledger_keeps_malformed_ops.sql: the ledger as
-- 20261122010000_sync_engine.sql left it (record_id and type required). The
-- ledger rows of ops rejected for their shape that named no record or type
-- cannot be kept under it and are deleted: a retry of such an op is then
-- answered as a first one (rejected again, as the function of then refuses
-- its whole batch).

alter table app_private.sync_ops drop constraint sync_ops_names_its_record;
delete from app_private.sync_ops where record_id is null or type is null;
alter table app_private.sync_ops
  alter column record_id set not null,
  alter column type set not null;

comment on column app_private.sync_ops.collection is 'Collection the op named, when it was a known one (null for an op rejected for an unknown collection).';
comment on column app_private.sync_ops.record_id is null;
comment on column app_private.sync_ops.type is null;
