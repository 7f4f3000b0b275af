// The numbers of a push's ops' data that JSON.parse did not read exactly
// (functions/_shared/inexact-numbers.ts), found in the body's text: by then
// the parsed body holds only the doubles. Per op, with paths from its data,
// for planBatch to refuse where the column would store another number.
import { type InexactNumber, inexactNumbersIn, mayHoldInexactNumber } from "../../_shared/inexact-numbers.ts";

/**
 * Per op index, the inexact numbers of its data; empty for almost every batch. `literals`: the
 * body's long number literals (what the body's one scan found: lib/middleware.ts).
 */
export function inexactNumbersOfOps(text: string, literals?: readonly string[]): Map<number, InexactNumber[]> {
  const byOp = new Map<number, InexactNumber[]>();
  if (!mayHoldInexactNumber(text, literals)) return byOp;
  for (const { path, literal } of inexactNumbersIn(text)) {
    const [ops, index, data, ...inData] = path;
    if (ops !== "ops" || typeof index !== "number" || data !== "data" || inData.length === 0) continue;
    byOp.set(index, [...(byOp.get(index) ?? []), { path: inData, literal }]);
  }
  return byOp;
}
