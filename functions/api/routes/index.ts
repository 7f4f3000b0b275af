// Every route group of the `api` function, registered in one place.
import type { App, Deps } from "../lib/app-env.ts";
import { registerMetaRoutes } from "./meta.ts";
import { registerWhoamiRoutes } from "./whoami.ts";
import { registerSyncChangesRoutes } from "./sync-changes.ts";
import { registerSyncBatchRoutes } from "./sync-batch.ts";
import { registerSyncRecordsRoutes } from "./sync-records.ts";
import { registerAuthSessionRoutes } from "./auth-session.ts";
import { registerDevicesRoutes } from "./devices.ts";
import { registerNotificationsRoutes } from "./notifications.ts";
import { registerReleasesRoutes } from "./releases.ts";
import { registerExpoUpdatesRoutes } from "./expo-updates.ts";
import { registerAccountDeletionRoutes } from "./account-deletion.ts";
import { registerAccountExportRoutes } from "./account-export.ts";

/**
 * Every route but GET /v1/openapi.json, the one that needs no database (app.ts registers it
 * ahead of the admission limit). GET /v1/meta reads the database's clock for its server_time.
 */
export function registerRoutes(app: App, deps: Deps): void {
  registerMetaRoutes(app, deps);
  registerWhoamiRoutes(app, deps);
  registerSyncChangesRoutes(app, deps);
  registerSyncBatchRoutes(app, deps);
  registerSyncRecordsRoutes(app, deps);
  registerAuthSessionRoutes(app, deps);
  registerDevicesRoutes(app, deps);
  registerNotificationsRoutes(app, deps);
  registerReleasesRoutes(app, deps);
  registerExpoUpdatesRoutes(app, deps);
  registerAccountDeletionRoutes(app, deps);
  registerAccountExportRoutes(app, deps);
}
