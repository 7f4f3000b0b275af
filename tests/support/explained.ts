// What Postgres did for the statements a test runs, counted rather than timed:
// each statement's plan (the triggers' nested ones included) as auto_explain
// reports it, on a connection whose notices are recorded.
import type postgres from "postgres";

export interface PlanNode {
  "Actual Loops"?: number;
  "Actual Rows"?: number;
  "Rows Removed by Filter"?: number;
  "Shared Hit Blocks"?: number;
  "Shared Read Blocks"?: number;
  "Node Type"?: string;
  "Relation Name"?: string;
  "Index Name"?: string;
  "Index Cond"?: string;
  "Subplan Name"?: string;
  "CTE Name"?: string;
  "Function Name"?: string;
  Operation?: string;
  "Conflicting Tuples"?: number;
  "Tuples Inserted"?: number;
  Plans?: PlanNode[];
}

export interface Explained {
  "Query Text": string;
  Plan: PlanNode;
  JIT?: unknown;
}

/** Pass `onnotice` to the connection's options; `explainEach` reads the plans from its notices. */
export function planRecorder() {
  const notices: string[] = [];
  return {
    onnotice: (notice: postgres.Notice) => void notices.push(notice.message),
    /**
     * Every statement `run` executes, nested ones (the triggers') included, as
     * auto_explain's JSON plans: with actual row and loop counts when `analyze`,
     * and each node's buffers when `buffers` too.
     */
    async explainEach(tx: postgres.TransactionSql, analyze: boolean, run: () => Promise<unknown>, buffers = false): Promise<Explained[]> {
      await tx.unsafe(`load 'auto_explain'`);
      await tx.unsafe(`set local auto_explain.log_min_duration = 0; set local auto_explain.log_analyze = ${analyze}; set local auto_explain.log_format = json;
                       set local auto_explain.log_buffers = ${buffers};
                       set local auto_explain.log_level = notice; set local auto_explain.log_nested_statements = on`);
      notices.length = 0;
      await run();
      return notices.map((text) => JSON.parse(text.slice(text.indexOf("{"))) as Explained);
    },
  };
}

/** Runs `work` in a transaction of `sql` that is rolled back (nothing to keep); its assertions still fail the test. */
export async function inRolledBackTransaction(sql: postgres.Sql, work: (tx: postgres.TransactionSql) => Promise<void>): Promise<void> {
  const ROLLBACK = "roll back";
  await sql.begin(async (tx) => {
    await work(tx);
    throw new Error(ROLLBACK);
  }).catch((error) => {
    if ((error as Error).message !== ROLLBACK) throw error;
  });
}

export function allNodes(node: PlanNode): PlanNode[] {
  return [node, ...(node.Plans ?? []).flatMap(allNodes)];
}

export function maxLoops(node: PlanNode): number {
  return Math.max(node["Actual Loops"] ?? 1, ...(node.Plans ?? []).map(maxLoops));
}
