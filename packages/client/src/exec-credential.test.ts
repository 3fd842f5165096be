import { NAMINGS } from '@svc/api';
import { execInfoEnv } from './exec-credential.js';

describe('execInfoEnv', () => {
  it("names the variable of the naming the plugin's apiVersion is spelt in", () => {
    for (const n of Object.values(NAMINGS)) {
      expect(execInfoEnv(`client.authentication.${n.groupSuffix}/v1`)).toBe(n.execInfoEnv);
      expect(execInfoEnv(`client.authentication.${n.groupSuffix}/v1beta1`)).toBe(n.execInfoEnv);
    }
  });
});
