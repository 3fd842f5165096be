import type { Invocation } from '../invocation.js';
import { Session } from '../session.js';

export async function run(inv: Invocation): Promise<void> {
  const session = Session.open(inv.globals, inv.io);
  try {
    const discovery = await session.discovery();
    const all = discovery.groups.flatMap((g) => g.versions.map((v) => (g.name ? `${g.name}/${v}` : v)));
    inv.io.out(
      [...new Set(all)]
        .sort()
        .map((v) => `${v}\n`)
        .join(''),
    );
  } finally {
    session.close();
  }
}
