// A file-backed SyncStorage for Node (CLI tools, servers, tests). The only
// client file besides storage-sqlite's test driver that uses Node built-ins,
// so apps for React Native or browsers never import it. Every `apply`
// rewrites the whole state to a temporary file, fsyncs it and renames it over
// the old one: a crash leaves either the old or the new state, never a torn
// one. Rewriting everything keeps it simple and is fine for thousands of
// records; an app with more uses SQLite (client/storage-sqlite.ts).
//
// One FileStorage per file at a time: each keeps the whole state in memory and
// rewrites the file from it, so two (two processes, or two in one) would each
// overwrite the other's writes. The first use takes `<file>.lock` (holding the
// pid, and on Linux the process's start time); another instance is refused
// while that process lives, until close(). The one rule (holderLives): a lock
// is stale when the process it names is gone, or is not the one that wrote it.
// Which is known by the start time where the system tells it (Linux /proc), and
// else, for this process's own pid, by `held`: a lock naming this pid that this
// process did not take was left by an earlier process with the same pid (a
// container's entrypoint is PID 1 at every start, also after a SIGKILL or OOM).
import { readFileSync, rmSync } from "node:fs";
import { open, readFile, rename, rm } from "node:fs/promises";
import path from "node:path";
import process from "node:process";
import { type StateMaps, type StoredState, WholeStateStorage } from "./storage.ts";

const FORMAT_VERSION = 1;

interface FileContents extends StoredState {
  format: number;
}

/** Lock files this process holds: removed when it exits. */
const held = new Set<string>();
let exitHookInstalled = false;

function releaseAllOnExit(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once("exit", () => {
    for (const lock of held) rmSync(lock, { force: true });
  });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, owned by someone else.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** When process `pid` started (clock ticks since boot, /proc/<pid>/stat field 22), or null where unknown (not Linux, gone). */
function startTime(pid: number): string | null {
  try {
    // The command name (field 2) may hold spaces and parentheses: count the fields after its last ")".
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19] ?? null;
  } catch {
    return null;
  }
}

/** A lock file's contents: "<pid>" (before start times were written) or "<pid> <start time>". */
function parseLock(text: string): { pid: number; start: string | null } | null {
  const [pid, start] = text.trim().split(" ");
  const n = Number(pid);
  return Number.isInteger(n) && n > 0 ? { pid: n, start: start || null } : null;
}

/** Whether the process that wrote the lock still runs (see the file's header for the rule). */
function holderLives(lock: { pid: number; start: string | null }): boolean {
  const current = startTime(lock.pid);
  // This pid, not in `held` (lock() checked): an earlier process that had this pid wrote it, unless
  // the start time says this very process did (another copy of this module, e.g. a worker thread).
  if (lock.pid === process.pid) return lock.start !== null && lock.start === current;
  if (!alive(lock.pid)) return false;
  return lock.start === null || current === null || lock.start === current;
}

export class FileStorage extends WholeStateStorage {
  /** The lock keeps every other instance out. */
  protected override readonly soleWriter = true;

  constructor(readonly filePath: string) {
    super();
  }

  private get lockPath(): string {
    return `${this.filePath}.lock`;
  }

  /** Whether this instance holds the file's lock (another in the process may hold it instead). */
  private locked = false;

  /** Lets go of the file (after the writes under way): another FileStorage may then open it. */
  async close(): Promise<void> {
    await this.settle();
    if (!this.locked) return;
    this.locked = false;
    held.delete(this.lockPath);
    await rm(this.lockPath, { force: true });
  }

  /**
   * Deletes the file (after the writes under way) and lets go of it: opened again, it is a new,
   * empty store. Refused, nothing deleted, while another FileStorage (of any process) holds it.
   */
  async destroy(): Promise<void> {
    await this.settle();
    if (!this.locked) await this.lock();
    await rm(this.filePath, { force: true });
    await rm(this.tempPath, { force: true });
    await this.close();
  }

  /** Takes the file's lock, or says who holds it. A lock left by a process that is gone is taken over. */
  private async lock(): Promise<void> {
    if (held.has(this.lockPath)) throw this.heldError(process.pid);
    for (;;) {
      try {
        const handle = await open(this.lockPath, "wx");
        try {
          await handle.writeFile(`${process.pid} ${startTime(process.pid) ?? ""}`.trim(), "utf8");
        } finally {
          await handle.close();
        }
        held.add(this.lockPath);
        this.locked = true;
        releaseAllOnExit();
        return;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      }
      const lock = parseLock(await readFile(this.lockPath, "utf8").catch(() => ""));
      if (lock && holderLives(lock)) throw this.heldError(lock.pid);
      await rm(this.lockPath, { force: true });
    }
  }

  private heldError(pid: number): Error {
    const who = pid === process.pid ? "another FileStorage of this process" : `process ${pid}`;
    return new Error(`${this.filePath} is in use by ${who} (${this.lockPath}): one FileStorage per file at a time; close() the other first`);
  }

  private get tempPath(): string {
    return path.join(path.dirname(this.filePath), `.${path.basename(this.filePath)}.tmp`);
  }

  protected async read(): Promise<StoredState> {
    await this.lock();
    try {
      return await this.readFile();
    } catch (error) {
      // Unreadable: not opened, so not held.
      held.delete(this.lockPath);
      this.locked = false;
      await rm(this.lockPath, { force: true });
      throw error;
    }
  }

  private async readFile(): Promise<StoredState> {
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
    const { records, outbox, cursor, schema, owner, ownerAccount, pullCollections } = contents;
    return {
      records, outbox, cursor, schema: schema ?? null, owner: owner ?? null, ownerAccount: ownerAccount ?? null,
      ...(pullCollections === undefined ? {} : { pullCollections }),
    };
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
