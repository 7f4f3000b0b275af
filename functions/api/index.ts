// Entry point of the `api` edge function (Supabase Edge Runtime or Deno).
import { createApp } from "./app.ts";
import { loadConfig } from "./lib/config.ts";
import { keepServingOnUncaughtErrors } from "./lib/keep-serving.ts";

keepServingOnUncaughtErrors();
const { app } = createApp(loadConfig(Deno.env.toObject()));

Deno.serve(app.fetch);
