// Copy to config.js beside index.html (your project's values; the anon key is public).
window.TIDESYNC_CONFIG = {
  supabaseUrl: "https://<project-ref>.supabase.co",
  supabaseAnonKey: "<anon or publishable key>",
};
