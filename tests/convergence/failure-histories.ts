// For diagnosis of a failed convergence run: each failing record's history on
// the device the failure names (its answers, pages and storage writes), with
// what the server holds about it (ledger, change entries), the device user's
// access entries and membership changes.
import { writeFile } from "node:fs/promises";
import { adminSql } from "../support/harness.ts";
import type { MembershipChurn } from "./membership-churn.ts";
import type { SimDevice } from "./sim-device.ts";

export async function writeFailureHistories(file: string, failures: string[], devices: SimDevice[], churn: MembershipChurn): Promise<void> {
  const lines: string[] = [];
  for (const failure of failures) {
    const match = /^(u\d+d\d+): .*?(?:[a-z_]+\/|"record_id":")([0-9a-f-]{36})/.exec(failure);
    const device = match && devices.find((d) => d.name === match[1]);
    if (!device) continue;
    const id = match[2];
    const ledger = await adminSql`select o.created_at, o.user_id, o.device_id, o.op_id, o.type, o.status, o.version, o.error ->> 'code' as code
                                    from app_private.sync_ops o where o.record_id = ${id} order by o.created_at`;
    const entries = await adminSql`select c.scope_id, c.present, c.seq, c.txid::text, c.since_seq from app_private.sync_changes c where c.id = ${id}`;
    const access = await adminSql`select a.scope_id, a.granted, a.seq, a.txid::text from app_private.sync_access a where a.user_id = ${device.user.userId}`;
    lines.push(
      `== ${failure}`,
      // The record's own lines, and every pull (with its cursor positions) for context.
      ...device.trace.filter((line) => line.includes(id) || line.includes(" pull: ")),
      ...ledger.map((o) => `server ledger: ${JSON.stringify(o)}`),
      ...entries.map((e) => `server change entry: ${JSON.stringify(e)}`),
      ...access.map((a) => `server access of the device's user: ${JSON.stringify(a)}`),
      ...churn.log.filter((line) => line.includes(` u${device.user.index} `)),
      "",
    );
  }
  await writeFile(file, lines.join("\n"));
}
