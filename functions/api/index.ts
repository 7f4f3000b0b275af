// Entry point of the `api` edge function (Supabase Edge Runtime or Deno).
import { createApp } from "./app.ts";
import { loadStartUpConfig } from "./lib/config.ts";
import { keepServingOnUncaughtErrors } from "./lib/keep-serving.ts";
import { startOrExit } from "./lib/start-up.ts";

const { app } = await startOrExit(async () => createApp(await loadStartUpConfig(Deno.env.toObject())));
keepServingOnUncaughtErrors();

Deno.serve(app.fetch);
