/**
 * `--store-servers-overrides`: per-resource store servers, `group/resource#servers` with
 * the servers separated by semicolons (the core group is empty: `/events#...`). Servers are
 * etcd client URLs (`http://`, `https://`) or one Redis (`redis://host:port`).
 */
export interface StoreOverride {
  group: string;
  resource: string;
  kind: 'etcd' | 'redis';
  servers: string[];
}

const FORMAT = 'must be of format: group/resource#servers, where servers are URLs, semicolon separated';

/** Parses the flag's entries; throws an Error whose message is the one line to print. */
export function parseStoreOverrides(entries: string[]): StoreOverride[] {
  const out: StoreOverride[] = [];
  const seen = new Set<string>();
  for (const entry of entries) {
    const bad = (why: string): never => {
      throw new Error(`--store-servers-overrides: invalid entry ${JSON.stringify(entry)}: ${why}`);
    };
    const hash = entry.indexOf('#');
    if (hash < 0) bad(FORMAT);
    const gr = entry.slice(0, hash).split('/');
    if (gr.length !== 2) bad(FORMAT);
    const [group, resource] = gr as [string, string];
    if (!resource || !/^[a-z0-9.-]*$/.test(group) || !/^[a-z0-9-]+$/.test(resource)) bad(FORMAT);
    const servers = entry
      .slice(hash + 1)
      .split(';')
      .map((s) => s.trim())
      .filter((s) => s !== '');
    if (servers.length === 0) bad(FORMAT);
    const schemes = new Set<string>();
    for (const s of servers) {
      let url: URL;
      try {
        url = new URL(s);
      } catch {
        return bad(`${JSON.stringify(s)} is not a URL`);
      }
      if (!['http:', 'https:', 'redis:'].includes(url.protocol))
        bad(
          `unsupported scheme ${JSON.stringify(url.protocol.slice(0, -1))} in ${JSON.stringify(s)} (http, https or redis)`,
        );
      if (!url.hostname || !url.port) bad(`${JSON.stringify(s)} must name a host and a port`);
      schemes.add(url.protocol === 'redis:' ? 'redis' : 'etcd');
    }
    if (schemes.size > 1) bad('etcd and redis servers cannot be mixed');
    const kind = schemes.has('redis') ? 'redis' : 'etcd';
    if (kind === 'redis' && servers.length > 1) bad('only one redis server is supported');
    const id = `${group}/${resource}`;
    if (seen.has(id)) bad(`${id} is overridden twice`);
    seen.add(id);
    out.push({ group, resource, kind, servers });
  }
  return out;
}
