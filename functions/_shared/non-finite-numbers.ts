// Numbers JSON.parse turns into ±Infinity (e.g. `1e309`): JSON.stringify would
// write them as null, so a request that holds one is refused where it is
// (the body's envelope: 400; one sync op's data: that op, rejected) instead
// of being stored as something else.
import { jsonPointer } from "./validation-details.ts";

interface PathNode {
  key: string;
  parent: PathNode | null;
}

/**
 * Whether JSON.parse reads this number literal as ±Infinity (beyond every finite double: 1e309).
 * A finite double is below 10^309: overflowing takes a positive exponent of three digits or
 * more, or, with an exponent of at most two digits, an integer part of at least 309 - 99 = 210
 * digits; both are long literals (long-number-literals.ts), so a body whose long literals are
 * all finite skips the walk of nonFiniteNumberAt.
 */
export function isNonFiniteNumberLiteral(literal: string): boolean {
  return !Number.isFinite(Number(literal));
}

/** JSON Pointer of the first number in `value` that is not finite, or null (iterative: nesting depth is the client's). */
export function nonFiniteNumberAt(value: unknown): string | null {
  const stack: [unknown, PathNode | null][] = [[value, null]];
  while (stack.length > 0) {
    const [item, node] = stack.pop()!;
    if (typeof item === "number" && !Number.isFinite(item)) {
      const path: string[] = [];
      for (let n = node; n; n = n.parent) path.unshift(n.key);
      return jsonPointer(path).slice(0, 256);
    }
    if (typeof item === "object" && item !== null) {
      for (const [key, child] of Object.entries(item)) stack.push([child, { key, parent: node }]);
    }
  }
  return null;
}
