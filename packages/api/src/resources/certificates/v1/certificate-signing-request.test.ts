import { NAMINGS } from '../../../names.js';
import { csrConditionCell } from './certificate-signing-request.js';

const csr = (types: string[], certificate?: string) => ({
  metadata: { name: 'c' },
  status: { conditions: types.map((type) => ({ type, status: 'True' })), certificate },
});

it.each([
  [[], undefined, 'Pending'],
  [['Approved'], 'Y2VydA==', 'Approved,Issued'],
  [['Approved', 'Failed'], undefined, 'Approved,Failed'],
  [['Approved', 'Denied'], undefined, 'Denied'],
  [['Custom'], undefined, 'Pending'],
])('CONDITION of %j (certificate %s) is %s', (types, certificate, cell) => {
  expect(csrConditionCell(csr(types, certificate))).toBe(cell);
});

it('signer names follow the naming', () => {
  expect(Object.values(NAMINGS.svc.signerNames)).toEqual([
    'svc.io/svc-apiserver-client',
    'svc.io/svc-apiserver-client-svclet',
    'svc.io/svclet-serving',
    'svc.io/legacy-unknown',
  ]);
  expect(Object.values(NAMINGS.kubernetes.signerNames)).toEqual([
    'kubernetes.io/kube-apiserver-client',
    'kubernetes.io/kube-apiserver-client-kubelet',
    'kubernetes.io/kubelet-serving',
    'kubernetes.io/legacy-unknown',
  ]);
});
