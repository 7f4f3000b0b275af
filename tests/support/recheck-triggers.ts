// docs/security-model.md step 3 for a test's own list-scoped synced table: the
// triggers that judge its writes again by the writer's role after the locks they
// waited for (without them npm run generate, and npm start's warning, refuse it).

export const RECHECK_ROWS = {
  insert: "new table as new_rows",
  update: "old table as old_rows new table as new_rows",
  delete: "old table as old_rows",
} as const;

/** The step 3 trigger of `table` for `event`, scoped by its `list_id`, with the editor's role. */
export function recheckTrigger(table: string, event: keyof typeof RECHECK_ROWS): string {
  return `create trigger writer_role_rechecked_on_${event} after ${event} on ${table} referencing ${RECHECK_ROWS[event]}
     for each statement when (current_user = 'authenticated') execute function app_private.recheck_write_into_list('editor', 'list_id')`;
}

/** All three step 3 triggers of `table`. */
export function recheckTriggers(table: string): string[] {
  return (Object.keys(RECHECK_ROWS) as (keyof typeof RECHECK_ROWS)[]).map((event) => recheckTrigger(table, event));
}
