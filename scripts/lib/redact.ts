// Connection URLs carry their password: what the scripts print shows it as ***,
// by one rule (redactPasswords), for npm start's banner and a failed command's
// message alike.

/**
 * Text (a command line, a command's output, one URL) with every password in it as ***: a URL's
 * (scheme://user:password@host, the password up to the last @ before the host, as a URL parser
 * reads an unescaped one) and a libpq keyword's (password=…).
 */
export function redactPasswords(text: string): string {
  return text
    .replace(/(\b[a-z][a-z0-9+.-]*:\/\/[^\s:/?#@]*:)[^\s/?#]*@/gi, "$1***@")
    .replace(/\b(password=)(?:'(?:[^'\\]|\\.)*'|[^\s'"]+)/gi, "$1***");
}

/** A connection URL with its password as *** (redactPasswords), or "(unparsable URL)". */
export function redactUrl(url: string): string {
  try {
    new URL(url);
  } catch {
    return "(unparsable URL)";
  }
  return redactPasswords(url);
}
