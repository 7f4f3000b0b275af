// Child process of storage-sqlite.unit.test.ts: a device that creates a task
// and syncs, and is killed (SIGKILL, no cleanup) in the middle of storing the
// server's answer: after the outbox statement, before the record statement.
// Usage: node --import tsx client/test/sqlite-crash-child.ts <db file>
import { SqliteStorage } from "../storage-sqlite.ts";
import { betterSqliteDriver } from "./better-sqlite3-driver.ts";
import { FakeServer, LIST_ID } from "./fake-server.ts";
import { openClient } from "./open-client.ts";

const file = process.argv[2];
let armed = false;
const driver = betterSqliteDriver(file, {
  afterRun: (sql) => {
    if (armed && sql.startsWith("delete from tidesync_outbox")) process.kill(process.pid, "SIGKILL");
  },
});
const { client } = await openClient(new FakeServer(), { storage: new SqliteStorage(driver) });
await client.create("tasks", { list_id: LIST_ID, title: "survives a crash" });
armed = true;
await client.sync();
// Never reached: the answer's write is where the process dies.
process.exit(3);
