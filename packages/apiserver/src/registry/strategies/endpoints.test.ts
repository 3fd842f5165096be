// Endpoints and EndpointSlice without a server: Kubernetes 1.32's v1 defaults, validation paths
// and messages (pkg/apis/core and pkg/apis/discovery validation), EndpointSlice generations, the
// Table cells kubectl prints, and the Protobuf field numbers of generated.proto.
import {
  builtinCatalog,
  fieldErrorMessage,
  group,
  type ApiObject,
  type EndpointSlice,
  type Endpoints,
  type FieldError,
  type ObjectSchema,
} from '@svc/api';
import { encodeMessage } from '@svc/machinery';
import type { StrategyContext } from '../strategy.js';
import { endpointsStrategy } from './endpoints.js';
import { endpointSliceStrategy } from './endpoint-slice.js';

const ctx: StrategyContext = { subresource: '' };
const catalog = builtinCatalog();
/** The cell of the Table column `name` of a type, as the server prints it for kubectl. */
function cellOf(o: { group: string; plural: string; name: string }): (obj: object) => unknown {
  const column = catalog.lookup(o.group, 'v1', o.plural)?.tableColumns?.find((c) => c.name === o.name);
  if (!column) throw new Error(`no column ${o.name}`);
  return (obj) => column.cell(obj as ApiObject, Date.now());
}
const endpointsCell = cellOf({ group: '', plural: 'endpoints', name: 'Endpoints' });
const slicePortsCell = cellOf({ group: group('discovery'), plural: 'endpointslices', name: 'Ports' });
const sliceEndpointsCell = cellOf({ group: group('discovery'), plural: 'endpointslices', name: 'Endpoints' });
const messages = async (errs: FieldError[] | Promise<FieldError[]> | undefined): Promise<string[]> =>
  (await Promise.resolve(errs ?? [])).map(fieldErrorMessage);
const endpoints = (subsets: unknown[]): ApiObject => ({ metadata: { name: 'e' }, subsets }) as ApiObject;
const slice = (o: Record<string, unknown>): ApiObject =>
  ({ metadata: { name: 's' }, addressType: 'IPv4', endpoints: [], ...o }) as ApiObject;

describe('Endpoints', () => {
  it('defaults ports to TCP and accepts a well-formed object', async () => {
    const e = endpoints([{ addresses: [{ ip: '10.0.0.1' }], ports: [{ port: 443, name: 'https' }] }]);
    endpointsStrategy.prepareForCreate?.(e, ctx);
    expect((e as Endpoints).subsets?.[0]?.ports?.[0]?.protocol).toBe('TCP');
    expect(await messages(endpointsStrategy.validate?.(e, ctx))).toEqual([]);
  });

  it("refuses bad subsets with Kubernetes' paths and messages", async () => {
    const e = endpoints([
      {},
      {
        addresses: [{ ip: '127.0.0.1' }, { ip: 'nope', hostname: 'A_B' }],
        notReadyAddresses: [{ ip: '169.254.1.1', nodeName: 'Bad Node' }],
        ports: [
          { port: 0, protocol: 'TCP' },
          { name: 'b', port: 80, protocol: 'ICMP', appProtocol: 'bad proto' },
        ],
      },
      { addresses: [{ ip: '0.0.0.0' }, { ip: '::1' }, { ip: 'fe80::1' }, { ip: '224.0.0.5' }] },
    ]);
    expect(await messages(endpointsStrategy.validate?.(e, ctx))).toEqual([
      'subsets[0]: Required value: must specify `addresses` or `notReadyAddresses`',
      'subsets[1].addresses[0].ip: Invalid value: "127.0.0.1": may not be in the loopback range (127.0.0.0/8, ::1/128)',
      'subsets[1].addresses[1].ip: Invalid value: "nope": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)',
      expect.stringMatching(
        /^subsets\[1\]\.addresses\[1\]\.hostname: Invalid value: "A_B": a lowercase RFC 1123 label/,
      ),
      'subsets[1].addresses[1].ip: Invalid value: "nope": must be a valid IP address',
      expect.stringMatching(
        /^subsets\[1\]\.notReadyAddresses\[0\]\.nodeName: Invalid value: "Bad Node": a lowercase RFC 1123 subdomain/,
      ),
      'subsets[1].notReadyAddresses[0].ip: Invalid value: "169.254.1.1": may not be in the link-local range (169.254.0.0/16, fe80::/10)',
      'subsets[1].ports[0].name: Required value',
      'subsets[1].ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive',
      'subsets[1].ports[1].protocol: Unsupported value: "ICMP": supported values: "SCTP", "TCP", "UDP"',
      expect.stringMatching(
        /^subsets\[1\]\.ports\[1\]\.appProtocol: Invalid value: "bad proto": name part must consist of/,
      ),
      'subsets[2].addresses[0].ip: Invalid value: "0.0.0.0": may not be unspecified (0.0.0.0)',
      'subsets[2].addresses[1].ip: Invalid value: "::1": may not be in the loopback range (127.0.0.0/8, ::1/128)',
      'subsets[2].addresses[2].ip: Invalid value: "fe80::1": may not be in the link-local range (169.254.0.0/16, fe80::/10)',
      'subsets[2].addresses[3].ip: Invalid value: "224.0.0.5": may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)',
    ]);
  });

  it("prints kubectl's ENDPOINTS cell", () => {
    const e = (subsets: unknown[]): Endpoints => ({ metadata: { name: 'e' }, subsets }) as Endpoints;
    expect(endpointsCell(e([]))).toBe('<none>');
    expect(endpointsCell(e([{ addresses: [{ ip: '10.0.0.1' }, { ip: '2001:db8::1' }], ports: [{ port: 443 }] }]))).toBe(
      '10.0.0.1:443,[2001:db8::1]:443',
    );
    const four = [1, 2, 3, 4].map((i) => ({ ip: `10.0.0.${i}` }));
    expect(endpointsCell(e([{ addresses: four, ports: [{ port: 80 }, { port: 81 }] }]))).toBe(
      '10.0.0.1:80,10.0.0.2:80,10.0.0.3:80 + 5 more...',
    );
    expect(endpointsCell(e([{ addresses: four }]))).toBe('10.0.0.1,10.0.0.2,10.0.0.3 + 1 more...');
    expect(endpointsCell(e([{ notReadyAddresses: [{ ip: '10.0.0.1' }], ports: [{ port: 80 }] }]))).toBe('');
  });
});

describe('EndpointSlice', () => {
  it('defaults port names and protocols, drops deprecatedTopology and sets generation 1', async () => {
    const s = slice({
      endpoints: [{ addresses: ['10.0.0.1'], deprecatedTopology: { a: 'b' }, conditions: { ready: true } }],
      ports: [{ port: 443 }],
    });
    endpointSliceStrategy.prepareForCreate?.(s, ctx);
    expect(s).toMatchObject({
      metadata: { generation: 1 },
      endpoints: [{ addresses: ['10.0.0.1'], conditions: { ready: true } }],
      ports: [{ name: '', protocol: 'TCP', port: 443 }],
    });
    expect((s as EndpointSlice).endpoints[0]?.deprecatedTopology).toBeUndefined();
    expect(await messages(endpointSliceStrategy.validate?.(s, ctx))).toEqual([]);
  });

  it('moves the generation on changes but not on annotations; addressType is immutable', async () => {
    const old = slice({ endpoints: [{ addresses: ['10.0.0.1'] }] });
    endpointSliceStrategy.prepareForCreate?.(old, ctx);
    const annotated = slice({ endpoints: [{ addresses: ['10.0.0.1'] }] });
    annotated.metadata = { ...old.metadata, annotations: { a: 'b' } };
    endpointSliceStrategy.prepareForUpdate?.(annotated, old, ctx);
    expect(annotated.metadata.generation).toBe(1);
    const moved = slice({ endpoints: [{ addresses: ['10.0.0.2'] }] });
    moved.metadata = { ...old.metadata };
    endpointSliceStrategy.prepareForUpdate?.(moved, old, ctx);
    expect(moved.metadata.generation).toBe(2);
    const retyped = slice({ addressType: 'IPv6', endpoints: [] });
    retyped.metadata = { ...old.metadata };
    expect(await messages(endpointSliceStrategy.validateUpdate?.(retyped, old, ctx))).toEqual([
      'addressType: Invalid value: "IPv6": field is immutable',
    ]);
  });

  it("refuses bad slices with Kubernetes' paths and messages", async () => {
    const s = slice({
      endpoints: [
        { addresses: [] },
        {
          addresses: ['2001:db8::1', '127.0.0.1'],
          nodeName: 'Bad',
          hostname: 'A',
          hints: { forZones: [{ name: 'a' }, { name: 'a' }] },
        },
        { addresses: Array.from({ length: 101 }, (_, i) => `10.0.${i}.1`) },
      ],
      ports: [
        { name: 'x', port: 1, protocol: 'TCP' },
        { name: 'x', port: 2, protocol: 'ICMP' },
      ],
    });
    expect(await messages(endpointSliceStrategy.validate?.(s, ctx))).toEqual([
      'endpoints[0].addresses: Required value: must contain at least 1 address',
      'endpoints[1].addresses[0]: Invalid value: "2001:db8::1": must be a valid IPv4 address',
      'endpoints[1].addresses[1]: Invalid value: "127.0.0.1": may not be in the loopback range (127.0.0.0/8, ::1/128)',
      expect.stringMatching(/^endpoints\[1\]\.nodeName: Invalid value: "Bad": a lowercase RFC 1123 subdomain/),
      expect.stringMatching(/^endpoints\[1\]\.hostname: Invalid value: "A": a lowercase RFC 1123 label/),
      'endpoints[1].hints.forZones[1].name: Duplicate value: "a"',
      'endpoints[2].addresses: Too many: must have at most 100 items',
      'ports[1].name: Duplicate value: "x"',
      'ports[1].protocol: Unsupported value: "ICMP": supported values: "SCTP", "TCP", "UDP"',
    ]);
    const fqdn = slice({
      addressType: 'FQDN',
      endpoints: [{ addresses: ['example.com.', 'single', 'UPPER.example'] }],
    });
    expect(await messages(endpointSliceStrategy.validate?.(fqdn, ctx))).toEqual([
      'endpoints[0].addresses[1]: Invalid value: "single": should be a domain with at least two segments separated by dots',
      expect.stringMatching(
        /^endpoints\[0\]\.addresses\[2\]: Invalid value: "UPPER.example": a lowercase RFC 1123 subdomain/,
      ),
    ]);
    expect(await messages(endpointSliceStrategy.validate?.(slice({ addressType: 'IP' }), ctx))).toEqual([
      'addressType: Unsupported value: "IP": supported values: "FQDN", "IPv4", "IPv6"',
    ]);
  });

  it("prints kubectl's PORTS and ENDPOINTS cells", () => {
    const s = (o: Partial<EndpointSlice>): EndpointSlice => ({
      metadata: { name: 's' },
      addressType: 'IPv4',
      endpoints: [],
      ...o,
    });
    expect(slicePortsCell(s({}))).toBe('<unset>');
    expect(sliceEndpointsCell(s({}))).toBe('<unset>');
    expect(slicePortsCell(s({ ports: [{ port: 80 }, { name: 'http' }, {}, { port: 1 }] }))).toBe(
      '80,http,* + 1 more...',
    );
    expect(
      sliceEndpointsCell(
        s({ endpoints: [{ addresses: ['10.0.0.1', '10.0.0.2'] }, { addresses: ['10.0.0.3', '10.0.0.4'] }] }),
      ),
    ).toBe('10.0.0.1,10.0.0.2,10.0.0.3 + 1 more...');
  });
});

describe("Protobuf of Endpoints and EndpointSlice: Kubernetes' field numbers", () => {
  const schemaOf = (g: string, plural: string): ObjectSchema => catalog.lookup(g, 'v1', plural)?.schema as ObjectSchema;
  const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
  const text = (s: string): string => Buffer.from(s).toString('hex');

  it('puts Endpoints subsets at 2 (addresses 1 {ip 1, hostname 3, nodeName 4}, ports 3 {name 1, port 2, protocol 3})', () => {
    const bytes = encodeMessage(
      {
        subsets: [
          {
            addresses: [{ ip: '1.2.3.4', hostname: 'h', nodeName: 'n' }],
            ports: [{ name: 'p', port: 80, protocol: 'TCP' }],
          },
        ],
      },
      schemaOf('', 'endpoints'),
    );
    const address = `0a07${text('1.2.3.4')}1a01${text('h')}2201${text('n')}`;
    const port = `0a01${text('p')}1050` + `1a03${text('TCP')}`;
    const subset = `0a0f${address}1a0a${port}`;
    expect(hex(bytes)).toBe(`121d${subset}`);
  });

  it('puts EndpointSlice endpoints at 2, ports at 3 and addressType at 4', () => {
    const bytes = encodeMessage(
      {
        addressType: 'IPv4',
        endpoints: [{ addresses: ['1.2.3.4'], conditions: { ready: true }, nodeName: 'n', zone: 'z' }],
        ports: [{ name: 'p', protocol: 'TCP', port: 80 }],
      },
      schemaOf(group('discovery'), 'endpointslices'),
    );
    const endpoint = `0a07${text('1.2.3.4')}12020801` + `3201${text('n')}3a01${text('z')}`;
    const port = `0a01${text('p')}1203${text('TCP')}1850`;
    expect(hex(bytes)).toBe(`1213${endpoint}1a0a${port}2204${text('IPv4')}`);
  });
});
