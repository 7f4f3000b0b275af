// Every synced collection says which of its rows are the caller's in a data
// export: a table made syncable without a rule fails here, not in a user's export.
import { describe, expect, it } from "vitest";
import { collectionNames } from "../../functions/_shared/collections.ts";
import { OWNED_ROWS } from "../../functions/api/account/export-ownership.ts";

describe("export ownership rules", () => {
  it("exist for exactly the synced collections", () => {
    expect(Object.keys(OWNED_ROWS).sort()).toEqual(collectionNames().sort());
  });
});
