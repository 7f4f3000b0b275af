// The numbers of a push's ops' data that JSON.parse did not read exactly
// (functions/_shared/inexact-numbers.ts), as the body's one walk found them
// (lib/middleware.ts acceptJsonBody: by then the parsed body holds only the
// doubles). Per op, with paths from its data, for planBatch to refuse where
// the column would store another number.
import type { InexactNumber } from "../../_shared/inexact-numbers.ts";

/** Per op index, the inexact numbers of its data; empty for almost every batch. `found`: the body's (c.var.inexactNumbers). */
export function inexactNumbersOfOps(found: readonly InexactNumber[]): Map<number, InexactNumber[]> {
  const byOp = new Map<number, InexactNumber[]>();
  for (const { path, literal } of found) {
    const [ops, index, data, ...inData] = path;
    if (ops !== "ops" || typeof index !== "number" || data !== "data" || inData.length === 0) continue;
    byOp.set(index, [...(byOp.get(index) ?? []), { path: inData, literal }]);
  }
  return byOp;
}
