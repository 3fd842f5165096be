// AlwaysDeny refuses every request in both phases with Kubernetes' message.
import type { Logger } from '@svc/component-base';
import { AlwaysDeny } from './always-deny.js';
import { attributes, failure, podObject } from './admission-testing.js';

it('refuses creates, updates and deletes with a 403 naming the object', async () => {
  const warnings: string[] = [];
  const plugin = new AlwaysDeny({ warn: (m: string) => warnings.push(m) } as unknown as Logger);
  expect(warnings[0]).toBe(
    'AlwaysDeny admission controller is deprecated. Please remove this controller from your configuration files and scripts.',
  );
  for (const operation of ['CREATE', 'UPDATE', 'DELETE'] as const) {
    const a = attributes({ resource: 'pods', operation, object: podObject(), oldObject: podObject() });
    for (const phase of [plugin.admit(a), plugin.validate(a)]) {
      const s = await failure(phase);
      expect(s.code).toBe(403);
      expect(s.reason).toBe('Forbidden');
      expect(s.message).toBe('pods "p" is forbidden: admission control is denying all modifications');
    }
  }
  const csr = attributes({
    resource: 'certificates.svc.io/v1/certificatesigningrequests',
    object: { metadata: { name: 'c' } },
  });
  expect((await failure(plugin.admit(csr))).message).toBe(
    'certificatesigningrequests.certificates.svc.io "c" is forbidden: admission control is denying all modifications',
  );
});
