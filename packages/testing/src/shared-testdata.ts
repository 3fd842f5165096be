import { existsSync } from 'node:fs';
import { resolve } from 'node:path';

/**
 * The project's shared test data (`../shared/testdata` beside the repository, read in place):
 * `SVC_SHARED_TESTDATA` if set, else the folder beside this checkout, else `/work/shared/testdata`
 * (a checkout made elsewhere on the machine that has it). Throws, naming every place looked at,
 * when none exists.
 */
export function sharedTestdata(...parts: string[]): string {
  const roots = [
    process.env.SVC_SHARED_TESTDATA,
    resolve(__dirname, '../../../../shared/testdata'),
    '/work/shared/testdata',
  ].filter((r): r is string => r !== undefined && r !== '');
  for (const root of roots) {
    const p = resolve(root, ...parts);
    if (existsSync(p)) return p;
  }
  throw new Error(`shared test data ${parts.join('/')} not found in ${roots.join(', ')} (set SVC_SHARED_TESTDATA)`);
}

/** The Gateway API v1.2.1 standard-channel CRDs (four YAML files). */
export function gatewayApiCrdDir(): string {
  return sharedTestdata('crds', 'gateway-api-v1.2.1');
}
