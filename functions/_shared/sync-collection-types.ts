// The shape of functions/_shared/sync-collections.generated.ts: a synced table
// as the database declares it (written by scripts/generate/sync-collections.ts).

export interface GeneratedField {
  name: string;
  /** Postgres type name (format_type). */
  type: string;
  /**
   * For a column of a domain (or an array of one): the type the domain is over, through domains
   * over domains (format_type, e.g. "timestamp with time zone", "text[]"). Its values are checked
   * as that type's; the domain's own checks are the database's.
   */
  base_type?: string;
  /**
   * The Postgres category of the column's values (pg_type.typcategory: S string, N numeric, U
   * user-defined, C composite, …), a domain's base type's, an array's element type's. The push
   * checks a value of a type it has no schema of its own for by it (collections.ts). Absent from
   * the GET /v1/meta of a server older than it.
   */
  category?: string;
  nullable: boolean;
  has_default: boolean;
  /**
   * Set (true) on a NOT NULL column without a default, other than the scope column, of a table
   * that has a BEFORE INSERT row trigger: the trigger may fill it, so a create may leave it out;
   * if it stays null the database refuses the row (`required` on the field).
   */
  filled_by_trigger?: boolean;
  /** `authenticated` may set it when creating a row / changing one (column privileges). */
  insertable: boolean;
  updatable: boolean;
  /** From simple checks: char_length(col) >= n / <= n, col ~ 'pattern'. */
  min_length?: number;
  max_length?: number;
  pattern?: string;
  /**
   * An enum column's labels, in the enum's order (pg_enum): the values it accepts (for an array
   * of an enum, each element's; through a domain, its base enum's).
   */
  enum_values?: string[];
}

export interface GeneratedCollection {
  name: string;
  /** Qualified table name, e.g. public.tasks. */
  table: string;
  /** The column holding the row's scope id ("id" for a scope table). */
  scope_column: string;
  /** The collection the scope column references by foreign key (its own name for a scope table). */
  scope_collection: string;
  /** Every column but id, in table order. */
  fields: GeneratedField[];
  /** Constraint (or unique index) name → the columns it concerns (maps a database refusal back to fields). */
  constraints: Record<string, string[]>;
  /**
   * The synced collections this table's foreign keys reference (its scope collection among them;
   * itself for a self-reference), sorted: the order a push's writes keep (plan-batch.ts writeGroups).
   */
  references: string[];
  /**
   * Column → the synced collection whose id it references, for each single-column foreign key to
   * another synced table's id but the scope column's (a push refuses a row naming a record its
   * batch deleted earlier: plan-batch.ts).
   */
  foreign_keys: Record<string, string>;
  /**
   * The column naming each row's creator: `created_by` when the table has one
   * of type uuid (a membership table's user column: the member), else null. A data export holds the rows it names the caller
   * in; without one, the rows whose sync state names the caller as creator
   * (functions/api/account/export-ownership.ts).
   */
  owner_column: string | null;
  /**
   * The column naming the member when the table is a membership table too
   * (app_private.enable_sync_membership: its rows grant access to their scope), else null.
   */
  membership_user_column: string | null;
}
