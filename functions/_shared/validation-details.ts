// Turns zod issues into the envelope's field details: a JSON Pointer to the
// field, a stable lower_snake code and a readable message. Shared by the
// function (request validation) and the client (local pre-checks).
import type { z } from "zod";
import type { FieldDetail } from "./errors.ts";
import { isStorable, toStorable, UNSTORABLE_KEY_MESSAGE } from "./storable-text.ts";

export function jsonPointer(path: readonly PropertyKey[]): string {
  if (path.length === 0) return "";
  return path.map((p) => "/" + String(p).replaceAll("~", "~0").replaceAll("/", "~1")).join("");
}

function sizeWord(origin: string | undefined): string {
  switch (origin) {
    case "string":
      return "characters";
    case "array":
    case "set":
      return "items";
    default:
      return "";
  }
}

/**
 * Whether the field an issue is about is missing from `input` (the value that
 * was parsed): `required`, whatever the field's type. zod's own issue does not
 * say so for every type (a missing enum is invalid_value, with no `input`
 * unless parsed with `reportInput`, which the route validators do not use).
 * A custom issue keeps the code its schema chose.
 */
function isMissing(issue: z.core.$ZodIssue, input: unknown): boolean {
  if (issue.code === "custom" || issue.code === "unrecognized_keys") return false;
  let value = input;
  for (const key of issue.path) {
    if (value === null || typeof value !== "object" || !Object.hasOwn(value, key)) return true;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value === undefined;
}

function describe(issue: z.core.$ZodIssue): { code: string; message: string } {
  switch (issue.code) {
    case "invalid_type":
      return { code: "invalid_type", message: `must be ${issue.expected}` };
    case "too_big": {
      const unit = sizeWord(issue.origin);
      const code = issue.origin === "string" || issue.origin === "array" ? "too_long" : "too_large";
      return { code, message: `at most ${String(issue.maximum)}${unit ? " " + unit : ""}` };
    }
    case "too_small": {
      const unit = sizeWord(issue.origin);
      const code = issue.origin === "string" || issue.origin === "array" ? "too_short" : "too_small";
      return { code, message: `at least ${String(issue.minimum)}${unit ? " " + unit : ""}` };
    }
    case "invalid_format":
      return { code: "invalid_format", message: issue.message || `must be a valid ${issue.format}` };
    case "invalid_value":
      return { code: "invalid_value", message: `must be one of ${issue.values.map((v) => JSON.stringify(v)).join(", ")}` };
    case "not_multiple_of":
      return { code: "invalid_value", message: `must be a multiple of ${String(issue.divisor)}` };
    case "invalid_union":
      return { code: "invalid_value", message: "does not match any allowed shape" };
    case "invalid_key":
      return { code: "invalid_key", message: "has an invalid key" };
    case "invalid_element":
      return { code: "invalid_value", message: "has an invalid element" };
    case "custom": {
      const params = (issue.params ?? {}) as { code?: unknown };
      return { code: typeof params.code === "string" ? params.code : "invalid_value", message: issue.message };
    }
    default:
      return { code: "invalid_value", message: "is invalid" };
  }
}

/** Whether `issue` states a tighter bound than `other`, of the same field and code. */
function tighter(issue: z.core.$ZodIssue, other: z.core.$ZodIssue): boolean {
  if (issue.code === "too_big" && other.code === "too_big") return Number(issue.maximum) < Number(other.maximum);
  if (issue.code === "too_small" && other.code === "too_small") return Number(issue.minimum) > Number(other.minimum);
  return false;
}

/**
 * The issues that make details: one per field and code. zod reports an
 * integer beyond 2^53 twice where a schema also states a bound (.int()'s safe
 * range, and the .max() that puts it in the OpenAPI document): the tighter
 * bound says it (a build_number of 1e20: "at most 2147483647"). An unexpected
 * key Postgres cannot store (NUL, an unpaired surrogate) is invalid_characters
 * on the object that holds it, as a json value's is (json-value.ts): a pointer
 * naming it would name no key of the request once made storable.
 */
function distinct(issues: readonly z.core.$ZodIssue[]): z.core.$ZodIssue[] {
  const kept: z.core.$ZodIssue[] = [];
  const at = new Map<string, number>();
  const keep = (issue: z.core.$ZodIssue) => {
    const key = JSON.stringify([issue.path.map(String), describe(issue).code]);
    const index = at.get(key);
    if (index === undefined) at.set(key, kept.push(issue) - 1);
    else if (tighter(issue, kept[index])) kept[index] = issue;
  };
  for (const issue of issues) {
    if (issue.code !== "unrecognized_keys") keep(issue);
    else if (issue.keys.every(isStorable)) kept.push(issue);
    else {
      keep({ code: "custom", path: issue.path, message: UNSTORABLE_KEY_MESSAGE, params: { code: "invalid_characters" } });
      const keys = issue.keys.filter(isStorable);
      if (keys.length > 0) kept.push({ ...issue, keys });
    }
  }
  return kept;
}

/**
 * One detail per offending field; an unexpected key gets its own pointer (one
 * that cannot be stored: its object's, see distinct()). At
 * most `limit` of them are built: a body with 100,000 unknown keys must not
 * cost 100,000 detail objects (the message counts them with issueCount).
 */
export function zodIssuesToDetails(
  issues: readonly z.core.$ZodIssue[],
  /** The value parsed (what the issues' paths are relative to). */
  input: unknown,
  prefix: readonly PropertyKey[] = [],
  limit = Number.POSITIVE_INFINITY,
): FieldDetail[] {
  const details: FieldDetail[] = [];
  for (const issue of distinct(issues)) {
    if (details.length >= limit) break;
    if (issue.code === "unrecognized_keys") {
      for (const key of issue.keys.slice(0, limit - details.length)) {
        details.push({ field: jsonPointer([...prefix, ...issue.path, key]), code: "unexpected_field", message: "is not an accepted field" });
      }
      continue;
    }
    const reason = isMissing(issue, input) ? { code: "required", message: "is required" } : describe(issue);
    details.push({ field: jsonPointer([...prefix, ...issue.path]), ...reason });
  }
  return details;
}

/** How many details zodIssuesToDetails would give without a limit. */
export function issueCount(issues: readonly z.core.$ZodIssue[]): number {
  return distinct(issues).reduce((count, issue) => count + (issue.code === "unrecognized_keys" ? issue.keys.length : 1), 0);
}

export function validationMessage(count: number): string {
  return count === 1 ? "1 field is invalid" : `${count} fields are invalid`;
}

/** At most this many details go into an answer (and the ledger); the message still counts them all. */
export const MAX_FIELD_DETAILS = 20;
const MAX_POINTER_LENGTH = 256;

/**
 * Details bounded in count and length (UTF-16 units), with characters Postgres
 * cannot store (NUL, unpaired surrogates: they may come from the client's own
 * key names, or from a cut through an emoji) replaced, so an answer stays
 * small. The ledger's bound is in bytes: see rejection() in plan-batch.ts.
 */
export function boundedDetails(details: readonly FieldDetail[]): FieldDetail[] {
  return details.slice(0, MAX_FIELD_DETAILS).map((detail) => ({
    field: toStorable(detail.field.slice(0, MAX_POINTER_LENGTH)),
    code: detail.code,
    message: toStorable(detail.message.slice(0, MAX_POINTER_LENGTH)),
  }));
}
