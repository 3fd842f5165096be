import YAML from 'yaml';

export interface SvcconfigInput {
  server: string;
  caPem: string;
  token?: string;
  clientCertPem?: string;
  clientKeyPem?: string;
  user?: string;
  cluster?: string;
}

/** A client configuration (kubeconfig format) for one cluster, user and context. */
export function svcconfigYaml(i: SvcconfigInput): string {
  const cluster = i.cluster ?? 'svc';
  const user = i.user ?? 'admin';
  const b64 = (s: string): string => Buffer.from(s).toString('base64');
  const userEntry: Record<string, string> = {};
  if (i.token) userEntry.token = i.token;
  if (i.clientCertPem) userEntry['client-certificate-data'] = b64(i.clientCertPem);
  if (i.clientKeyPem) userEntry['client-key-data'] = b64(i.clientKeyPem);
  return YAML.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    preferences: {},
    clusters: [{ name: cluster, cluster: { server: i.server, 'certificate-authority-data': b64(i.caPem) } }],
    users: [{ name: user, user: userEntry }],
    contexts: [{ name: `${user}@${cluster}`, context: { cluster, user, namespace: 'default' } }],
    'current-context': `${user}@${cluster}`,
  });
}
