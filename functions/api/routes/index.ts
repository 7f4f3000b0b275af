// Every route group of the `api` function, registered in one place.
import type { App, Deps } from "../lib/app-env.ts";
import { registerMetaRoutes } from "./meta.ts";
import { registerWhoamiRoutes } from "./whoami.ts";

export function registerRoutes(app: App, deps: Deps): void {
  registerMetaRoutes(app, deps);
  registerWhoamiRoutes(app, deps);
}
