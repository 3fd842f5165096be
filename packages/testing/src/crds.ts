import { readFile } from 'node:fs/promises';
import YAML from 'yaml';
import { group, isAlreadyExists, type ApiObject } from '@svc/api';
import { inServerNaming } from './crd-naming.js';
import { dynamicResource, waitForResource, type ApiResource, type ResourceClient, type RestClient } from '@svc/client';

/** A CustomResourceDefinition: the fields this module reads, and any others. */
export interface CrdManifest extends ApiObject {
  spec: {
    group: string;
    names: { plural: string; kind: string; [field: string]: unknown };
    versions: Array<{ name: string; served?: boolean; [field: string]: unknown }>;
    [field: string]: unknown;
  };
  status?: { conditions?: Array<{ type: string; status: string; reason?: string; message?: string }> };
}

const CRD_GROUP_PREFIX = 'apiextensions';

/** CustomResourceDefinitions in the naming in use (`apiextensions.<suffix>/v1`). */
export function crdClient(client: RestClient): ResourceClient<CrdManifest> {
  return dynamicResource<CrdManifest>(client, {
    group: group(CRD_GROUP_PREFIX),
    version: 'v1',
    resource: 'customresourcedefinitions',
    namespaced: false,
  });
}

/**
 * The CustomResourceDefinitions of YAML or JSON files, in order (several `---` documents per
 * file allowed; empty documents skipped). Any other kind is an error naming the file.
 */
export async function readCrdFiles(files: string[]): Promise<CrdManifest[]> {
  const out: CrdManifest[] = [];
  for (const file of files) {
    const docs = YAML.parseAllDocuments(await readFile(file, 'utf8'));
    for (const [i, doc] of docs.entries()) {
      if (doc.errors.length) throw new Error(`${file}: document ${i + 1}: ${doc.errors[0]?.message ?? ''}`);
      const obj = doc.toJS() as CrdManifest | null;
      if (obj === null || obj === undefined) continue;
      if (obj.kind !== 'CustomResourceDefinition') {
        throw new Error(`${file}: document ${i + 1} is a ${String(obj.kind)}, not a CustomResourceDefinition`);
      }
      out.push(obj);
    }
  }
  return out;
}

/**
 * Creates each CRD (one that already exists is left as it is) and resolves once every one is
 * Established and each of its served versions is in discovery and answers a list. Rejects
 * when a CRD's names are refused, or after `timeoutMs` (default 30 s).
 */
export async function installCrds(
  client: RestClient,
  crds: CrdManifest[],
  o: { timeoutMs?: number } = {},
): Promise<ApiResource[]> {
  const timeoutMs = o.timeoutMs ?? 30_000;
  const rc = crdClient(client);
  const created = await Promise.all(
    crds.map(async (crd) => {
      const c = inServerNaming(crd);
      try {
        await rc.create(c);
      } catch (e) {
        if (!isAlreadyExists(e)) throw e;
      }
      return c;
    }),
  );
  const deadline = Date.now() + timeoutMs;
  const served = await Promise.all(
    created.map(async (crd) => {
      await waitEstablished(client, { crd, deadline });
      return Promise.all(
        crd.spec.versions
          .filter((v) => v.served !== false)
          .map(async (v) => {
            const apiVersion = `${crd.spec.group}/${v.name}`;
            const timeout = Math.max(0, deadline - Date.now());
            const r = await waitForResource(
              client,
              { apiVersion, resource: crd.spec.names.plural },
              { timeoutMs: timeout },
            );
            await dynamicResource(client, r).list({ limit: 1 });
            return r;
          }),
      );
    }),
  );
  return served.flat();
}

async function waitEstablished(client: RestClient, o: { crd: CrdManifest; deadline: number }): Promise<void> {
  const rc = crdClient(client);
  const name = o.crd.metadata.name ?? '';
  for (;;) {
    const got = await rc.get(name);
    const conditions = got.status?.conditions ?? [];
    if (conditions.some((c) => c.type === 'Established' && c.status === 'True')) return;
    const names = conditions.find((c) => c.type === 'NamesAccepted' && c.status === 'False');
    if (names) throw new Error(`CRD ${name}: names not accepted: ${names.reason ?? ''} ${names.message ?? ''}`);
    if (Date.now() > o.deadline) throw new Error(`CRD ${name} not Established: ${JSON.stringify(conditions)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
