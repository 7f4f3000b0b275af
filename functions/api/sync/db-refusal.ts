// When the database refuses a record's final state (app_private.sync_apply
// reports the row with its SQLSTATE, constraint and column), this says why in
// the op's own terms: which field, which rule. Pure; the table's constraint
// names map back to its columns through the generated collection description.
import type { CollectionDefinition } from "../../_shared/collections.ts";
import type { FieldDetail } from "../../_shared/errors.ts";
import type { SyncOpError } from "../../_shared/schemas/sync.ts";
import { notFound, rejection } from "./plan-batch.ts";

export interface Refusal {
  collection: string;
  id: string;
  kind: "insert" | "update" | "delete";
  /** A SQLSTATE, or "not_permitted": the policies left a visible row unwritten. */
  sqlstate: string;
  constraint?: string | null;
  column?: string | null;
  message?: string;
}

function fieldsOf(refusal: Refusal, collection: CollectionDefinition | undefined): string[] {
  if (refusal.column) return [refusal.column];
  const columns = refusal.constraint ? collection?.constraints[refusal.constraint] : undefined;
  return columns?.filter((c) => c !== "id") ?? [];
}

export function refusalError(refusal: Refusal, index: number, collection: CollectionDefinition | undefined): SyncOpError {
  const at = (field: string) => `/ops/${index}/data/${field}`;
  const details = (code: string, message: string): FieldDetail[] => {
    const fields = fieldsOf(refusal, collection);
    return fields.length > 0 ? fields.map((f) => ({ field: at(f), code, message })) : [{ field: `/ops/${index}/data`, code, message }];
  };
  const rule = refusal.constraint ? ` (${refusal.constraint})` : "";
  switch (refusal.sqlstate) {
    case "not_permitted":
    case "42501": // a policy's WITH CHECK refused the row
      return rejection("FORBIDDEN", refusal.kind === "delete" ? "you may not delete this record" : "you may not make this change to this record");
    case "23505":
      if (refusal.constraint === `${collection?.table.split(".").pop()}_pkey`) {
        // The id belongs to a row the caller cannot see: answered like an unknown id.
        return notFound(index, refusal.collection);
      }
      return rejection("VALIDATION_FAILED", `the value must be unique${rule}`, details("taken", "is already taken"));
    case "23503":
      return rejection("NOT_FOUND", `refers to a record that does not exist${rule}`, details("not_found", "is not a record you can see"));
    case "23502":
      return rejection("VALIDATION_FAILED", "a required field is missing", details("required", "is required"));
    case "23514":
      return rejection("VALIDATION_FAILED", `the record breaks a rule of the table${rule}`, details("check_failed", `breaks the rule ${refusal.constraint ?? "of the table"}`));
    default:
      // 22xxx (a value the column type refuses), other 23xxx, P0001 (a trigger refused the row)
      return rejection("VALIDATION_FAILED", "the database refused this record", details("invalid_value", "is not accepted by the database"));
  }
}
