import { fileURLToPath } from "node:url";
import path from "node:path";

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
export const bin = (name: string) => path.join(ROOT, "node_modules", ".bin", name);
