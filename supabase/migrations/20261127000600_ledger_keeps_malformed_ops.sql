-- What: the op ledger (app_private.sync_ops) records an op rejected for its
-- shape, which may name no record or type: record_id and type may be null, for
-- a rejected op only. POST /v1/sync/batch used to refuse a whole batch with 400
-- when one op had a record_id that was not a uuid, an unknown type, a bad
-- base_version or an unexpected key, so the ledger only ever held well-formed
-- ops; api-v1.md wants such an op rejected on its own while the others run, and
-- exactly once like any rejection (a retry answers "duplicate").
-- Test: supabase/tests/database/128-sync-ops-malformed-ops.test.sql;
-- tests/integration/sync-batch.test.ts (one malformed op in a batch).
-- Down step: supabase/rollbacks/20261127000600_ledger_keeps_malformed_ops.down.sql.

alter table app_private.sync_ops
  alter column record_id drop not null,
  alter column type drop not null,
  add constraint sync_ops_names_its_record check (status = 'rejected' or (record_id is not null and type is not null));

comment on column app_private.sync_ops.collection is
  'Collection the op named, when it was a known one (null for an op rejected for an unknown collection or its shape).';
comment on column app_private.sync_ops.record_id is
  'Record the op named (null for an op rejected for its shape that named no uuid).';
comment on column app_private.sync_ops.type is
  'upsert or delete (null for an op rejected for its shape that named neither).';
comment on constraint sync_ops_names_its_record on app_private.sync_ops is
  'Only a rejected op may lack a record or type: every applied or conflicting op named both.';
