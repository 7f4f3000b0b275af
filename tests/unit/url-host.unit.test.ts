// TIDESYNC_HOST → the URLs npm start prints and probes: a wildcard is listened on, never connected to.
import { describe, expect, it } from "vitest";
import { isWildcardHost, urlHost } from "../../scripts/lib/url-host.ts";

describe("urlHost", () => {
  it("names this machine for a host that listens on every interface", () => {
    for (const host of ["0.0.0.0", "::", "[::]"]) {
      expect(isWildcardHost(host)).toBe(true);
      expect(urlHost(host)).toBe("127.0.0.1");
    }
  });

  it("keeps a named interface, in brackets when it is IPv6", () => {
    expect(urlHost("127.0.0.1")).toBe("127.0.0.1");
    expect(urlHost("192.168.1.23")).toBe("192.168.1.23");
    expect(urlHost("localhost")).toBe("localhost");
    expect(urlHost("::1")).toBe("[::1]");
    expect(urlHost("[::1]")).toBe("[::1]");
    expect(isWildcardHost("192.168.1.23")).toBe(false);
  });
});
