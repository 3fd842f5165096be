import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startSvcctlEnv, type RunResult, type SvcctlEnv } from '../svcctl-testing.js';

/**
 * The write commands against a real server under --naming=kubernetes, next to stock kubectl:
 * svcctl works in one namespace, kubectl in another, with the same files and arguments; the
 * outputs (namespace names normalised) and the resulting objects must be the same.
 */
describe('svcctl create, apply, replace, patch, label, annotate, scale, delete (as kubectl)', () => {
  let env: SvcctlEnv;
  const ours = 'ns-svcctl';
  const theirs = 'ns-kubectl';

  beforeAll(async () => {
    env = await startSvcctlEnv({ args: ['--naming=kubernetes'] });
    for (const ns of [ours, theirs]) {
      await env.kube.ok(['create', 'namespace', ns]);
      await env.kube.ok(['create', 'serviceaccount', 'default', '-n', ns]);
    }
  });
  afterAll(() => env.stop());

  const norm = (s: string): string =>
    s
      .replaceAll(ours, 'NS')
      .replaceAll(theirs, 'NS')
      .replace(/svcctl/g, 'kubectl')
      .replace(/"(uid|resourceVersion|creationTimestamp|time)": "[^"]*"/g, '"$1": "X"')
      .replace(/(uid|resourceVersion|creationTimestamp): .*/g, '$1: X');

  /** The same command in both namespaces; expects the same code, output and errors. */
  async function both(args: string[], o: { stdin?: string } = {}): Promise<RunResult> {
    const [a, b] = await Promise.all([
      env.run([...args, '-n', ours], { stdin: o.stdin }),
      env.kubectl([...args, '-n', theirs], { stdin: o.stdin }),
    ]);
    expect({ args, code: a.code, out: norm(a.stdout), err: norm(a.stderr) }).toEqual({
      args,
      code: b.code,
      out: norm(b.stdout),
      err: norm(b.stderr),
    });
    return a;
  }

  /** Drops false, 0 and null: kubectl's typed generators send Protobuf, where unset fields arrive as zero values. */
  const withoutFalse = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(withoutFalse);
    if (v && typeof v === 'object') {
      return Object.fromEntries(
        Object.entries(v)
          .filter(([, x]) => x !== false && x !== 0 && x !== null)
          .map(([k, x]) => [k, withoutFalse(x)]),
      );
    }
    return v;
  };

  /** The object as both left it, without what differs by nature (uid, versions, times, managers). */
  async function sameObject(type: string, name: string, o: { ignoreFalse?: boolean } = {}): Promise<void> {
    const get = async (ns: string): Promise<unknown> => {
      const r = await env.kube.ok(['get', type, name, '-n', ns, '-o', 'json']);
      const obj = JSON.parse(norm(r.stdout)) as { metadata: Record<string, unknown>; status?: unknown };
      delete obj.metadata.managedFields;
      delete obj.metadata.generation;
      delete obj.status;
      return o.ignoreFalse ? withoutFalse(obj) : obj;
    };
    expect(await get(ours)).toEqual(await get(theirs));
  }

  const file = async (name: string, text: string): Promise<string> => {
    const p = join(env.home, name);
    await writeFile(p, text);
    return p;
  };

  const DEPLOY = (image: string, extra = ''): string => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: main
        image: ${image}
        env: [{name: A, value: "1"}${extra}]
        ports: [{containerPort: 80, name: http}]
`;

  it('create -f: created, errors per object, dry runs, -o name, --save-config', async () => {
    const f = await file(
      'create.yaml',
      'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c1}\ndata: {a: "1"}\n---\napiVersion: v1\nkind: Secret\nmetadata: {name: s1}\nstringData: {k: v}\n',
    );
    await both(['create', '-f', f]);
    await both(['create', '-f', f]);
    await both(['create', '-f', f, '--dry-run=client']);
    await both(['create', '-f', f, '--dry-run=server']);
    const g = await file('create2.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c2}\ndata: {a: "1"}\n');
    await both(['create', '-f', g, '-o', 'name', '--save-config']);
    await sameObject('cm', 'c2');
    await both(['create', '-f', g, '-o', 'yaml', '--dry-run=client']);
  });

  it('create -f refuses unknown fields unless --validate says otherwise', async () => {
    const f = await file(
      'unknown.yaml',
      'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: u1}\nbogus: 1\ndata: {a: "1"}\n',
    );
    await both(['create', '-f', f]);
    await both(['create', '-f', f, '--validate=warn']);
    await both(['delete', 'cm', 'u1']);
    await both(['create', '-f', f, '--validate=false']);
  });

  it('apply -f (client side): created, unchanged, configured, deletions from the last applied configuration', async () => {
    const v1 = await file('deploy-v1.yaml', DEPLOY('nginx:1', ', {name: B, value: "2"}'));
    const v2 = await file('deploy-v2.yaml', DEPLOY('nginx:2'));
    await both(['apply', '-f', v1]);
    await sameObject('deploy', 'web');
    await both(['apply', '-f', v1]);
    await both(['apply', '-f', v2]);
    await sameObject('deploy', 'web');
    await both(['apply', '-f', v1, '--dry-run=server']);
    await both(['apply', '-f', v1, '-o', 'name']);
    await sameObject('deploy', 'web');
  });

  it('apply: svcctl continues what kubectl applied (same annotation, same patch result)', async () => {
    const cm1 = await file(
      'cm-v1.yaml',
      'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: handover}\ndata: {a: "1", b: "2"}\n',
    );
    const cm2 = await file(
      'cm-v2.yaml',
      'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: handover}\ndata: {a: "1", c: "3"}\n',
    );
    for (const ns of [ours, theirs]) await env.kube.ok(['apply', '-f', cm1, '-n', ns]);
    expect((await env.ok(['apply', '-f', cm2, '-n', ours])).stdout).toBe('configmap/handover configured\n');
    await env.kube.ok(['apply', '-f', cm2, '-n', theirs]);
    await sameObject('cm', 'handover');
    expect((await env.kubectl(['apply', '-f', cm2, '-n', ours])).stdout).toBe('configmap/handover unchanged\n');
  });

  it('apply --server-side: applied, conflicts as kubectl words them, --force-conflicts, --field-manager', async () => {
    const a = await file('ssa-a.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ssa}\ndata: {a: "1"}\n');
    const b = await file('ssa-b.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ssa}\ndata: {a: "2"}\n');
    await both(['apply', '--server-side', '-f', a]);
    await both(['apply', '--server-side', '-f', b, '--field-manager=other']);
    await both(['apply', '--server-side', '-f', b, '--field-manager=other', '--force-conflicts']);
    await sameObject('cm', 'ssa');
  });

  it('replace, patch, label, annotate', async () => {
    const f = await file('rp.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: rp}\ndata: {a: "1"}\n');
    const g = await file('rp2.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: rp}\ndata: {a: "2"}\n');
    await both(['create', '-f', f]);
    await both(['replace', '-f', g]);
    await both(['replace', '-f', f, '--force']);
    await sameObject('cm', 'rp');
    await both(['patch', 'cm', 'rp', '-p', '{"data":{"b":"2"}}']);
    await both(['patch', 'cm', 'rp', '-p', '{"data":{"b":"2"}}']);
    await both(['patch', 'cm/rp', '--type=merge', '-p', 'data: {c: "3"}']);
    await both(['patch', 'cm', 'rp', '--type=json', '-p', '[{"op":"remove","path":"/data/c"}]']);
    await both(['patch', 'cm', 'rp', '--type=json', '-p', '[{"op":"remove","path":"/data/zzz"}]']);
    await both(['patch', 'cm', 'rp', '-p', '{"data":{"d":"4"}}', '--dry-run=server', '-o', 'jsonpath={.data}']);
    await sameObject('cm', 'rp');
    await both(['label', 'cm', 'rp', 'app=x', 'tier=y']);
    await both(['label', 'cm', 'rp', 'app=z']);
    await both(['label', 'cm', 'rp', 'app=z', '--overwrite']);
    await both(['label', 'cm', 'rp', 'tier-', 'nothere-']);
    await both(['label', 'cm', 'rp', 'app=z', '--overwrite']);
    await both(['annotate', 'cm', 'rp', 'note=hello world', '-o', 'name']);
    await both(['annotate', 'cm', 'rp', 'note-']);
    await both(['label', 'cm', 'rp', 'bad key=1']);
    await sameObject('cm', 'rp');
  });

  it('scale through the scale subresource', async () => {
    await both(['scale', 'deploy', 'web', '--replicas=3']);
    await both(['scale', 'deploy/web', '--replicas=2', '--current-replicas=3']);
    await both(['scale', 'deploy/web', '--replicas=5', '--current-replicas=3']);
    await both(['scale', 'cm', 'rp', '--replicas=1']);
    await sameObject('deploy', 'web');
  });

  it('create <kind> builds the objects kubectl builds', async () => {
    const gens = [
      ['create', 'namespace', 'gen-ns'],
      ['create', 'serviceaccount', 'robot'],
      ['create', 'configmap', 'gen-cm', '--from-literal=a=1', '--from-literal=b=two words'],
      ['create', 'secret', 'generic', 'gen-secret', '--from-literal=password=s3cret', '--type=Opaque'],
      [
        'create',
        'deployment',
        'gen-deploy',
        '--image=nginx:1.27',
        '--image=registry.example/team/side-car:v2',
        '--replicas=2',
        '--port=8080',
      ],
      [
        'create',
        'role',
        'gen-role',
        '--verb=get,list',
        '--verb=watch',
        '--resource=pods,deployments.apps,pods/log',
        '--resource-name=a',
      ],
      [
        'create',
        'rolebinding',
        'gen-rb',
        '--role=gen-role',
        '--user=alice',
        '--group=devs',
        '--serviceaccount=default:robot',
      ],
      ['create', 'clusterrole', 'gen-cr', '--verb=*', '--resource=nodes'],
      ['create', 'clusterrolebinding', 'gen-crb', '--clusterrole=gen-cr', '--user=bob'],
    ];
    for (const g of gens) {
      await both([...g, '--dry-run=client', '-o', 'yaml']);
      await both([...g, '--dry-run=server', '-o', 'name']);
    }
    for (const g of gens.filter((x) => !['namespace', 'clusterrole', 'clusterrolebinding'].includes(x[1] ?? ''))) {
      await both(g);
      await both(g);
    }
    await sameObject('deploy', 'gen-deploy', { ignoreFalse: true });
    await sameObject('role', 'gen-role');
    await both(['create', 'rolebinding', 'bad-rb', '--user=alice']);
    await both(['create', 'role', 'odd-role', '--verb=fly', '--resource=pods']);
    await both(['create', 'role', 'bad-role', '--verb=bind', '--resource=pods']);
    await both(['create', 'role', 'bad-role', '--verb=get', '--resource=nosuch']);
    await both([
      'create',
      'role',
      'esc-role',
      '--verb=escalate,bind',
      '--resource=roles,clusterroles.rbac.authorization.k8s.io',
      '--dry-run=client',
      '-o',
      'yaml',
    ]);
  });

  it('create token prints a token for the service account', async () => {
    const r = await env.ok(['create', 'token', 'robot', '-n', ours, '--duration=10m', '--audience=a', '--audience=b']);
    const payload = JSON.parse(Buffer.from(r.stdout.trim().split('.')[1] ?? '', 'base64url').toString()) as {
      aud: string[];
      exp: number;
      iat: number;
      sub: string;
    };
    expect(payload.aud).toEqual(['a', 'b']);
    expect(payload.exp - payload.iat).toBe(600);
    expect(payload.sub).toBe(`system:serviceaccount:${ours}:robot`);
    await both(['create', 'token', 'nobody']);
  });

  it('delete: names, -f, -l, --ignore-not-found, dry runs, -o name, cascade and grace period', async () => {
    for (const n of ['d1', 'd2', 'd3']) await both(['create', 'configmap', n]);
    await both(['label', 'cm', 'd1', 'd2', 'del=yes']);
    await both(['delete', 'cm', 'd1', '--dry-run=client']);
    await both(['delete', 'cm', 'd1', '--dry-run=server']);
    await both(['delete', 'cm', '-l', 'del=yes']);
    await both(['delete', 'cm', 'd1']);
    await both(['delete', 'cm', 'd1', '--ignore-not-found']);
    await both(['delete', 'cm', '-l', 'del=yes']);
    await both(['delete', 'cm']);
    await both(['delete']);
    // No garbage collector runs here: orphan and foreground deletions keep their finalizer, so they are not waited for.
    await both(['delete', 'cm', 'd3', '--cascade=orphan', '--grace-period=0', '--wait=false', '-o', 'name']);
    const f = await file('del.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: rp}\n');
    await both(['delete', '-f', f, '--cascade=foreground', '--wait=false']);
    await both(['delete', 'deploy/web', 'secret/s1']);
  });
});
