// docs/security-model.md step 3 for a test's own list-scoped synced table: the
// triggers that judge its writes again by the writer's role after the locks they
// waited for (without them npm run generate, and npm start's warning, refuse it),
// as npm run generate's refusal spells them (RECHECK_TRIGGERS).
import { RECHECK_TRIGGERS } from "../../scripts/generate/sync-collection-checks.ts";

/** All three step 3 triggers of `table`, scoped by its `list_id`, with the editor's role. */
export function recheckTriggers(table: string): string[] {
  return Object.entries(RECHECK_TRIGGERS).map(([name, { event, rows }]) =>
    `create trigger ${name} after ${event} on ${table} referencing ${rows}
       for each statement when (current_user = 'authenticated') execute function app_private.recheck_write_into_list('editor', 'list_id')`
  );
}
