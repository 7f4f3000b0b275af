// `DATABASE_URL=… npm run db:setup [-- --seed | --no-seed]`: brings that
// database to the current schema: the Supabase platform stand-in when it is not
// a Supabase database (needs a superuser URL then), every migration through
// `supabase db push`, then the sample seed when the schema is new and auth.users
// is empty, never into a real Supabase database (decideSeed; --seed loads it
// anyway, --no-seed never). Safe to re-run: a database that had the schema
// keeps its data (sample rows and members deleted since stay deleted). With a
// superuser's URL, migrations and seed run as the database owner (or
// DATABASE_OWNER_URL), never as the superuser: hosted `postgres` is not one.
import { databaseKind, type SeedChoice, scriptDatabaseUrls, setupDatabase } from "./database.ts";
import { redactUrl } from "../lib/redact.ts";


const { url, ownerUrl } = scriptDatabaseUrls("db:setup");
const seed: SeedChoice = process.argv.includes("--no-seed") ? "never" : process.argv.includes("--seed") ? "always" : "if-new";

try {
  console.log(`db:setup ${redactUrl(url)} (${await databaseKind(url)})`);
  const { kind, seeded } = await setupDatabase({ adminUrl: url, migrationUrl: ownerUrl, seed, log: (line) => console.log(`  · ${line}`) });
  console.log(`db:setup done (${kind === "supabase" ? "Supabase database" : "plain Postgres with the Supabase stand-in"}${seeded ? ", sample seed loaded" : ""})`);
} catch (error) {
  console.error(`db:setup failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
