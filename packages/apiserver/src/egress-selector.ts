import { parse as parseYaml } from 'yaml';

/** Where the API server connects (Kubernetes' egress selections). */
export type EgressSelectionName = 'cluster' | 'controlplane' | 'etcd';

export interface EgressSelection {
  name: EgressSelectionName;
  proxyProtocol: 'Direct' | 'HTTPConnect' | 'GRPC';
}

const NAMES = ['cluster', 'controlplane', 'etcd'];
const PROTOCOLS = ['Direct', 'HTTPConnect', 'GRPC'];

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * An EgressSelectorConfiguration (`apiserver.<suffix>/v1beta1` or `v1alpha1`), checked as
 * Kubernetes' ValidateEgressSelectorConfiguration (names, duplicates, transport required by the
 * proxy protocols and forbidden for Direct). This server only connects directly: a selection
 * asking for a proxy is refused rather than bypassed. Throws one line naming what is wrong.
 */
export function parseEgressSelectorConfiguration(text: string, groupSuffix: string): EgressSelection[] {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (e) {
    throw new Error(`not YAML or JSON: ${(e as Error).message.split('\n')[0] ?? ''}`, { cause: e });
  }
  if (!isObject(doc)) throw new Error('not an EgressSelectorConfiguration object');
  const versions = [`apiserver.${groupSuffix}/v1beta1`, `apiserver.${groupSuffix}/v1alpha1`];
  if (doc.kind !== 'EgressSelectorConfiguration' || !versions.includes(String(doc.apiVersion)))
    throw new Error(
      `no kind "${String(doc.kind)}" is registered for version "${String(doc.apiVersion)}": want kind EgressSelectorConfiguration, apiVersion ${versions.join(' or ')}`,
    );
  const list = doc.egressSelections ?? [];
  if (!Array.isArray(list)) throw new Error('egressSelections: must be a list');
  const seen = new Set<string>();
  return list.map((item: unknown, i): EgressSelection => {
    const path = `egressSelections[${i}]`;
    if (!isObject(item)) throw new Error(`${path}: must be an object`);
    // As Kubernetes: the deprecated name `master` means `controlplane`.
    const name = item.name === 'master' ? 'controlplane' : String(item.name ?? '');
    if (!NAMES.includes(name))
      throw new Error(
        `${path}.name: Unsupported value: "${name}": supported values: ${NAMES.map((n) => `"${n}"`).join(', ')}`,
      );
    if (seen.has(name)) throw new Error(`${path}.name: Duplicate value: "${name}"`);
    seen.add(name);
    const connection = isObject(item.connection) ? item.connection : {};
    const protocol = String(connection.proxyProtocol ?? '');
    if (!PROTOCOLS.includes(protocol))
      throw new Error(
        `${path}.connection.proxyProtocol: Unsupported value: "${protocol}": supported values: ${PROTOCOLS.map((p) => `"${p}"`).join(', ')}`,
      );
    const transport = connection.transport;
    if (protocol === 'Direct' && transport !== undefined && transport !== null)
      throw new Error(`${path}.connection.transport: Forbidden: transport config should be absent for direct connect`);
    if (protocol !== 'Direct') {
      if (!isObject(transport))
        throw new Error(`${path}.connection.transport: Required value: transport must be set for ${protocol}`);
      throw new Error(
        `${path}.connection.proxyProtocol: ${protocol} is not supported by this server: it connects directly only (use Direct or leave ${name} out)`,
      );
    }
    return { name: name as EgressSelectionName, proxyProtocol: 'Direct' };
  });
}
