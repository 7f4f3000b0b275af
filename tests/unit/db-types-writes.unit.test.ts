// restrictWrites: the generated supabase types let a Data API client write only
// what `authenticated` may (its column privileges), so a write the database
// refuses with 42501 does not compile. tests/types/database-writes.typecheck.ts
// checks the committed file against supabase-js itself.
import { describe, expect, it } from "vitest";
import { restrictWrites } from "../../scripts/generate/db-types-writes.ts";

const generated = (publicTables: string) => `export type Json = string | number | boolean | null;

export type Database = {
  "app_private": {
    Tables: {
      "devices": {
        Row: { "id": string; "user_id": string };
        Insert: { "id"?: string; "user_id": string };
        Update: { "id"?: string; "user_id"?: string };
        Relationships: [];
      };
    };
    Views: { [_ in never]: never };
  };
  "public": {
    Tables: {${publicTables}
    };
    Views: { [_ in never]: never };
  };
};
`;

const tasks = `
      "tasks": {
        Row: {
          "created_by": string | null;
          "id": string;
          "title": string;
        };
        ComputedFields: never;
        Insert: {
          "created_by"?: string | null;
          "id"?: string;
          "title": string;
        };
        Update: {
          "created_by"?: string | null;
          "id"?: string;
          "title"?: string;
        };
        Relationships: [];
      };`;

const members = `
      "list_members": {
        Row: { "role": string; "user_id": string };
        Insert: { "role": string; "user_id": string };
        Update: { "role"?: string; "user_id"?: string };
        Relationships: [];
      };`;

describe("restrictWrites", () => {
  it("keeps in Insert and Update only the columns authenticated may insert / update, and Row whole", () => {
    const source = generated(tasks);
    const out = restrictWrites(source, "public", new Map([["tasks", { insert: ["id", "title"], update: ["title"] }]]));
    expect(out).toBe(generated(`
      "tasks": {
        Row: {
          "created_by": string | null;
          "id": string;
          "title": string;
        };
        ComputedFields: never;
        Insert: {
          "id"?: string;
          "title": string;
        };
        Update: {
          "title"?: string;
        };
        Relationships: [];
      };`));
  });

  it("makes Insert or Update never where authenticated may write no column (as for a relation without them)", () => {
    const out = restrictWrites(generated(members), "public", new Map([["list_members", { insert: [], update: ["role"] }]]));
    expect(out).toBe(generated(`
      "list_members": {
        Row: { "role": string; "user_id": string };
        Insert: never;
        Update: { "role"?: string; };
        Relationships: [];
      };`));
  });

  it("leaves the other schemas as generated", () => {
    const source = generated(tasks);
    const out = restrictWrites(source, "public", new Map([["tasks", { insert: ["id", "title", "created_by"], update: ["id", "title", "created_by"] }]]));
    expect(out).toBe(source);
  });

  it("refuses a relation whose privileges were not read, rather than leave its writes open", () => {
    expect(() => restrictWrites(generated(tasks + members), "public", new Map([["tasks", { insert: [], update: [] }]])))
      .toThrow(/public\.list_members/);
  });

  it("refuses a column the types do not hold, rather than miss a privilege", () => {
    expect(() => restrictWrites(generated(tasks), "public", new Map([["tasks", { insert: ["title", "notes"], update: [] }]])))
      .toThrow(/public\.tasks\.notes/);
  });
});
