// AlwaysAdmit admits everything and warns that it is deprecated.
import type { Logger } from '@svc/component-base';
import { AlwaysAdmit } from './always-admit.js';
import { attributes, podObject } from './admission-testing.js';

it('admits every operation in both phases and logs its deprecation', async () => {
  const warnings: string[] = [];
  const log = { warn: (m: string) => warnings.push(m) } as unknown as Logger;
  const plugin = new AlwaysAdmit(log);
  expect(warnings).toEqual([
    'AlwaysAdmit admission controller is deprecated. Please remove this controller from your configuration files and scripts.',
  ]);
  for (const operation of ['CREATE', 'UPDATE', 'DELETE'] as const) {
    const a = attributes({ resource: 'pods', operation, object: podObject(), oldObject: podObject() });
    await expect(plugin.admit()).resolves.toBeUndefined();
    await expect(plugin.validate()).resolves.toBeUndefined();
    expect(a.object).toEqual(podObject());
  }
});
