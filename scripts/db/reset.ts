// `DATABASE_URL=… npm run db:reset`: starts a stand-in database over: drops
// and recreates it (same owner), then db:setup (stand-in, migrations, seed;
// never as a superuser: see migrationConnection in database.ts).
// Refuses on a real Supabase database (use `supabase db reset` there, which
// knows what the platform owns), on the maintenance databases, and on any
// other database that is not a stand-in one (someone's app database pointed at
// by mistake) unless it holds nothing yet.
import postgres from "postgres";
import { databaseKind, describeRelations, ownRelations, scriptDatabaseUrls, setupDatabase, withDatabase } from "./database.ts";

const { url, ownerUrl } = scriptDatabaseUrls("db:reset");
const database = decodeURIComponent(new URL(url).pathname.replace(/^\//, ""));

try {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(database) || ["postgres", "template0", "template1"].includes(database)) {
    throw new Error(`refusing to drop the database ${JSON.stringify(database)}: point DATABASE_URL at a dedicated database`);
  }
  const kind = await databaseKind(url);
  if (kind === "supabase") {
    throw new Error("this is a real Supabase database; db:reset only starts stand-in databases over. " +
      "Use `supabase db reset` (local stack) or `supabase db reset --linked` (a project you mean to wipe).");
  }
  if (kind === "plain") {
    const own = await ownRelations(url);
    if (own.length > 0) {
      throw new Error(`${database} is not a tidesync stand-in database: it has no Supabase stand-in and holds ${describeRelations(own)}. ` +
        "db:reset only starts stand-in databases over; if you mean to throw this one away, drop it yourself.");
    }
  }
  const maintenance = postgres(withDatabase(url, "postgres"), { max: 1, onnotice: () => {} });
  try {
    const [row] = await maintenance<{ owner: string; superuser: boolean }[]>`
      select pg_get_userbyid(d.datdba) as owner, (select rolsuper from pg_roles where rolname = current_user) as superuser
      from pg_database d where d.datname = ${database}`;
    if (!row.superuser) throw new Error("db:reset re-applies the Supabase stand-in, which needs a superuser DATABASE_URL");
    console.log(`db:reset: dropping and recreating ${database} (owner ${row.owner})`);
    await maintenance.unsafe(`drop database "${database}" with (force)`);
    await maintenance.unsafe(`create database "${database}" owner "${row.owner.replaceAll('"', '""')}"`);
  } finally {
    await maintenance.end();
  }
  // Migrations run as the database owner, as on hosted Supabase (where it is
  // `postgres`, not a superuser): DATABASE_OWNER_URL, or DATABASE_URL with the
  // owner's name; a database a superuser owns is handed to tidesync_owner first.
  await setupDatabase({ adminUrl: url, migrationUrl: ownerUrl, seed: "if-new", log: (line) => console.log(`  · ${line}`) });
  console.log("db:reset done");
} catch (error) {
  console.error(`db:reset: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
