// A file-backed SyncStorage for Node (CLI tools, servers, tests). The only
// client file besides storage-sqlite's test driver that uses Node built-ins,
// so apps for React Native or browsers never import it. Every `apply`
// rewrites the whole state to a temporary file, fsyncs it and renames it over
// the old one: a crash leaves either the old or the new state, never a torn
// one. Rewriting everything keeps it simple and is fine for thousands of
// records; an app with more uses SQLite (client/storage-sqlite.ts).
import { open, readFile, rename, rm } from "node:fs/promises";
import path from "node:path";
import { type StateMaps, type StoredState, WholeStateStorage } from "./storage.ts";

const FORMAT_VERSION = 1;

interface FileContents extends StoredState {
  format: number;
}

export class FileStorage extends WholeStateStorage {
  constructor(readonly filePath: string) {
    super();
  }

  private get tempPath(): string {
    return path.join(path.dirname(this.filePath), `.${path.basename(this.filePath)}.tmp`);
  }

  protected async read(): Promise<StoredState> {
    let text: string | null = null;
    try {
      text = await readFile(this.filePath, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
    // A temp file left by a crash before its rename is an incomplete write: the old file stands.
    await rm(this.tempPath, { force: true });
    if (text === null) return { records: [], outbox: [], cursor: null, schema: null };
    const contents = JSON.parse(text) as FileContents;
    if (contents.format !== FORMAT_VERSION) throw new Error(`${this.filePath}: unknown store format ${String(contents.format)}`);
    return { records: contents.records, outbox: contents.outbox, cursor: contents.cursor, schema: contents.schema ?? null };
  }

  protected async persist(next: StateMaps): Promise<void> {
    const contents: FileContents = { format: FORMAT_VERSION, ...next.toState() };
    const handle = await open(this.tempPath, "w");
    try {
      await handle.writeFile(JSON.stringify(contents), "utf8");
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(this.tempPath, this.filePath);
    // Make the rename itself durable (directory entry); not supported everywhere (e.g. Windows).
    try {
      const dir = await open(path.dirname(this.filePath), "r");
      try {
        await dir.sync();
      } finally {
        await dir.close();
      }
    } catch {
      // best effort: the data file itself is already synced
    }
  }
}
