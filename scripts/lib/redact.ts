// Connection URLs carry their password: what the scripts print shows it as ***.

/** A connection URL with its password as ***. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.toString();
  } catch {
    return "(unparsable URL)";
  }
}

/**
 * Text (a command line, a command's output) with the password of every URL in it
 * (scheme://user:password@host) as ***.
 */
export function redactPasswords(text: string): string {
  return text.replace(/(\b[a-z][a-z0-9+.-]*:\/\/[^\s:/?#@]*:)[^\s@]*@/gi, "$1***@");
}
