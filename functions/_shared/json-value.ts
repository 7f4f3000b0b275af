// The value of a json or jsonb column (and of a composite one, whose fields
// the database reads: collections.ts): a JSON value that Postgres can store.
// One iterative walk checks it, however deep the client nested it:
//   - at most MAX_JSON_DEPTH deep (`too_deep`): zod's z.json() recursed once
//     per level and ran out of stack on a 3,000-deep value (a 500 for the
//     whole batch);
//   - no string and no object key holding a character Postgres cannot store
//     (`invalid_characters`: NUL, an unpaired surrogate): jsonb refuses them,
//     and the whole batch's writes failed to cast to jsonb (a 500); such a key
//     is reported on the object that holds it (storable-text.ts);
//   - numbers finite (`not_finite`), values JSON can carry (`invalid_type`).
// Shared by the push (collections.ts) and the client's pre-check, which
// builds its schemas with the same fieldValueSchema.
import { z } from "zod";
import { MAX_JSON_DEPTH } from "./limits.ts";
import { isStorable, UNSTORABLE_KEY_MESSAGE, UNSTORABLE_MESSAGE } from "./storable-text.ts";
import { MAX_FIELD_DETAILS } from "./validation-details.ts";

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

export interface JsonValueProblem {
  /** Where in the value (object keys, array indexes); [] for the value itself. */
  path: (string | number)[];
  code: "too_deep" | "invalid_characters" | "not_finite" | "invalid_type";
  message: string;
}

interface PathNode {
  key: string | number;
  parent: PathNode | null;
}

function pathOf(node: PathNode | null): (string | number)[] {
  const path: (string | number)[] = [];
  for (let n = node; n; n = n.parent) path.push(n.key);
  return path.reverse();
}

/** Stands on the walk's stack for an object key Postgres cannot store (reported in its turn, on the object). */
const UNSTORABLE_KEY = Symbol("unstorable key");

function isPlainObject(value: object): boolean {
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/**
 * What Postgres could not store of `value` as json/jsonb, in document order, at most `limit`
 * problems. Iterative: the nesting depth is the client's. An object's undefined property is
 * skipped (JSON.stringify leaves it out); anything else JSON cannot carry is `invalid_type`.
 */
export function jsonValueProblems(value: unknown, limit: number = MAX_FIELD_DETAILS): JsonValueProblem[] {
  const problems: JsonValueProblem[] = [];
  const report = (node: PathNode | null, code: JsonValueProblem["code"], message: string) => problems.push({ path: pathOf(node), code, message });
  // [value, where, how many arrays and objects enclose it]
  const stack: [unknown, PathNode | null, number][] = [[value, null, 0]];
  while (stack.length > 0 && problems.length < limit) {
    const [item, node, enclosing] = stack.pop()!;
    if (item === null || typeof item === "boolean") continue;
    if (item === UNSTORABLE_KEY) {
      report(node, "invalid_characters", UNSTORABLE_KEY_MESSAGE);
      continue;
    }
    if (typeof item === "string") {
      if (!isStorable(item)) report(node, "invalid_characters", UNSTORABLE_MESSAGE);
      continue;
    }
    if (typeof item === "number") {
      if (!Number.isFinite(item)) report(node, "not_finite", "must be a finite number");
      continue;
    }
    if (typeof item !== "object" || !(Array.isArray(item) || isPlainObject(item))) {
      report(node, "invalid_type", "must be a JSON value");
      continue;
    }
    if (enclosing >= MAX_JSON_DEPTH) {
      report(node, "too_deep", `must not nest arrays and objects more than ${MAX_JSON_DEPTH} deep`);
      continue;
    }
    // Pushed last first, so that they are taken (and reported) in document order.
    if (Array.isArray(item)) {
      for (let i = item.length - 1; i >= 0; i--) stack.push([item[i], { key: i, parent: node }, enclosing + 1]);
      continue;
    }
    // One problem for the object, however many of its keys Postgres cannot store, where the first is.
    const keys = Object.keys(item);
    const storable = keys.map(isStorable);
    const firstUnstorable = storable.indexOf(false);
    for (let i = keys.length - 1; i >= 0; i--) {
      const child = (item as Record<string, unknown>)[keys[i]];
      if (i === firstUnstorable) stack.push([UNSTORABLE_KEY, node, enclosing + 1]);
      else if (storable[i] && child !== undefined) stack.push([child, { key: keys[i], parent: node }, enclosing + 1]);
    }
  }
  return problems;
}

/** A json/jsonb column's value: any JSON value Postgres can store (jsonValueProblems), taken as it is. */
export function jsonValueSchema(): z.ZodType<JsonValue> {
  return z.unknown().superRefine((value, ctx) => {
    if (value === undefined) {
      ctx.addIssue({ code: "custom", message: "is required", params: { code: "required" } });
      return;
    }
    for (const problem of jsonValueProblems(value)) {
      ctx.addIssue({ code: "custom", path: problem.path, message: problem.message, params: { code: problem.code } });
    }
  }) as unknown as z.ZodType<JsonValue>;
}
