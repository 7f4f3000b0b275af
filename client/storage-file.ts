// A file-backed SyncStorage for Node (CLI tools, servers, tests). The only
// client file that uses Node built-ins, so apps for React Native or browsers
// never import it. Every `apply` rewrites the whole state to a temporary file,
// fsyncs it and renames it over the old one: a crash leaves either the old or
// the new state, never a torn one. Rewriting everything keeps it simple and is
// fine for thousands of records; an app with more uses SQLite (README).
import { open, readFile, rename, rm } from "node:fs/promises";
import path from "node:path";
import { type StorageChange, StateMaps, type StoredState, type SyncStorage } from "./storage.ts";

const FORMAT_VERSION = 1;

interface FileContents extends StoredState {
  format: number;
}

export class FileStorage implements SyncStorage {
  private maps: StateMaps | null = null;
  /** Writes run one after another, in call order. */
  private queue: Promise<void> = Promise.resolve();

  constructor(readonly filePath: string) {}

  private get tempPath(): string {
    return path.join(path.dirname(this.filePath), `.${path.basename(this.filePath)}.tmp`);
  }

  private async state(): Promise<StateMaps> {
    if (this.maps) return this.maps;
    let text: string | null = null;
    try {
      text = await readFile(this.filePath, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
    // A temp file left by a crash before its rename is an incomplete write: the old file stands.
    await rm(this.tempPath, { force: true });
    if (text === null) {
      this.maps = new StateMaps();
    } else {
      const contents = JSON.parse(text) as FileContents;
      if (contents.format !== FORMAT_VERSION) throw new Error(`${this.filePath}: unknown store format ${String(contents.format)}`);
      this.maps = StateMaps.from(contents);
    }
    return this.maps;
  }

  async load(): Promise<StoredState> {
    return JSON.parse(JSON.stringify((await this.state()).toState())) as StoredState;
  }

  apply(change: StorageChange): Promise<void> {
    const write = this.queue.then(async () => {
      const current = await this.state();
      // Apply to a copy first so a failed write leaves memory and disk agreeing.
      const next = StateMaps.from(JSON.parse(JSON.stringify(current.toState())) as StoredState);
      next.apply(JSON.parse(JSON.stringify(change)) as StorageChange);
      await this.writeAtomically({ format: FORMAT_VERSION, ...next.toState() });
      this.maps = next;
    });
    this.queue = write.catch(() => {});
    return write;
  }

  private async writeAtomically(contents: FileContents): Promise<void> {
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
