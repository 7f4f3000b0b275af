// npm run test:migrations names the down step that left a catalog difference
// (leftBy, scripts/migrations/catalog-snapshot.ts), not every older point the
// difference is carried to.
import { describe, expect, it } from "vitest";
import { leftBy } from "../../scripts/migrations/catalog-snapshot.ts";

const M = ["m0", "m1", "m2", "m3"];

describe("leftBy", () => {
  it("no difference names no down step", () => {
    expect([...leftBy(M, [[], [], [], [], []])]).toEqual([]);
  });

  it("a difference carried to older points is named once, by the newest down step it shows after", () => {
    const comment = ["- column a.b comment=", "+ column a.b comment=kept"];
    // Down step m3 forgot the comment (seen at points 3, 2, 1); down step m1 left a function (point 1 only).
    const diffs = [[], [...comment, "- function a.f()"], comment, comment, []];
    expect(Object.fromEntries(leftBy(M, diffs))).toEqual({
      m3: comment.map((line) => ({ line, firstAt: "m2" })),
      m1: [{ line: "- function a.f()", firstAt: "m0" }],
    });
  });
});
