// Child process of storage.unit.test.ts: opens a FileStorage on the file it is
// given, says so, and holds it until it is killed.
// Usage: node --import tsx client/test/file-lock-child.ts <store file>
import { FileStorage } from "../storage-file.ts";

await new FileStorage(process.argv[2]).loadState();
process.stdout.write("opened\n");
setInterval(() => {}, 60_000);
