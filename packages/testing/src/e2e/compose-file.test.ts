// docker-compose.yml, deploy/prometheus.yml and scripts/cluster.sh read as files (no Docker
// needed; scripts/compose-test.sh runs the compose file for real): the topology is the one
// the cluster issue names, every component's command parses with that binary's own flag
// parser, the scrape config covers every component, and the process runner starts each
// control-plane binary with the same flags as the compose file.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parse } from 'yaml';
import { parseApiServerOptions } from '@svc/apiserver';
import { parseControllerManagerOptions } from '@svc/controller-manager';
import { parseSchedulerOptions } from '@svc/scheduler';
import { parseLoadBalancerArgs } from '@svc/svcadm';

const ROOT = resolve(__dirname, '../../../..');

interface Service {
  image?: string;
  command?: string[];
  hostname?: string;
  restart?: string;
  profiles?: string[];
  depends_on?: Record<string, { condition: string }>;
  environment?: Record<string, string>;
  healthcheck?: { test: string[] };
}
const compose = parse(readFileSync(resolve(ROOT, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
  services: Record<string, Service>;
};
const services = compose.services;
const byBinary = (bin: string): string[] => Object.keys(services).filter((n) => services[n]?.command?.[0] === bin);
/** `${VAR:-default}` as docker compose fills it in with VAR unset. */
const interpolate = (a: string): string => a.replace(/\$\{[A-Z0-9_]+:-([^}]*)\}/g, '$1');
const args = (name: string): string[] => (services[name]?.command?.slice(1) ?? []).map(interpolate);
const flagNames = (argv: string[]): string[] =>
  [...new Set(argv.filter((a) => a.startsWith('--')).map((a) => a.replace(/=.*$/, '')))].sort();

describe('docker-compose.yml', () => {
  it("has the issue's topology: 3 etcd, 2 API servers, 2 controller managers, 2 schedulers, 2 nodes, a load balancer and the one-shots", () => {
    expect(byBinary('etcd')).toEqual(['etcd-1', 'etcd-2', 'etcd-3']);
    expect(byBinary('svc-apiserver')).toEqual(['apiserver-1', 'apiserver-2']);
    expect(byBinary('svc-controller-manager')).toEqual(['controller-manager-1', 'controller-manager-2']);
    expect(byBinary('svc-scheduler')).toEqual(['scheduler-1', 'scheduler-2']);
    expect(byBinary('deploy/compose-node.sh')).toEqual(['node-1', 'node-2']);
    expect(byBinary('svc-lb')).toEqual(['lb']);
    for (const oneShot of ['init', 'bootstrap']) expect(services[oneShot]?.restart).toBe('no');
    // Nodes are named by their host names, which are also their service names.
    for (const n of byBinary('deploy/compose-node.sh')) expect(services[n]?.hostname).toBe(n);
  });

  it('every dependency names a service, and what waits for health has a health check', () => {
    for (const [name, s] of Object.entries(services)) {
      for (const [dep, { condition }] of Object.entries(s.depends_on ?? {})) {
        expect([name, dep, dep in services]).toEqual([name, dep, true]);
        if (condition === 'service_healthy') expect(services[dep]?.healthcheck?.test.length).toBeGreaterThan(0);
      }
    }
  });

  it('the etcd members form one cluster of exactly themselves', () => {
    for (const m of byBinary('etcd')) {
      const env = services[m]?.environment ?? {};
      const members = (env.ETCD_INITIAL_CLUSTER ?? '').split(',').map((x) => x.split('=')[0]);
      expect(members).toEqual(byBinary('etcd'));
      expect(args(m)).toEqual(
        expect.arrayContaining([
          `--name=${m}`,
          `--advertise-client-urls=http://${m}:2379`,
          `--initial-advertise-peer-urls=http://${m}:2380`,
        ]),
      );
    }
  });

  it("each API server parses with svc-apiserver's flags: every etcd member, Node,RBAC, bootstrap tokens, service-account keys, client CA", () => {
    for (const name of byBinary('svc-apiserver')) {
      const o = parseApiServerOptions(args(name), { quiet: true }) as unknown as Record<string, unknown>;
      expect(String(o.storeServers)).toBe(
        byBinary('etcd')
          .map((m) => `http://${m}:2379`)
          .join(','),
      );
      expect(o.authorizationMode).toEqual(['Node', 'RBAC']);
      expect(o.enableBootstrapTokenAuth).toBe(true);
      expect(o).toMatchObject({
        clientCaFile: '/cluster/pki/ca.crt',
        serviceAccountSigningKeyFile: '/cluster/pki/sa.key',
        securePort: 6443,
      });
    }
  });

  it('the controller managers and schedulers parse with their own flags, leader-elected, on the lb address', () => {
    for (const name of byBinary('svc-controller-manager')) {
      const o = parseControllerManagerOptions(args(name), { quiet: true });
      expect(o.leaderElect).toBe(true);
      expect(o.securePort).toBe(10257);
    }
    for (const name of byBinary('svc-scheduler')) {
      const o = parseSchedulerOptions(args(name), { quiet: true });
      expect(o.leaderElect).toBe(true);
      expect(o.securePort).toBe(10259);
    }
    expect(readFileSync(resolve(ROOT, 'deploy/compose-init.sh'), 'utf8')).toContain(
      'svcconfig "$C/admin.svcconfig" https://lb:6443',
    );
  });

  it('the load balancer fronts exactly the API servers', () => {
    // (The CA file exists only in the cluster volume; the parser reads it.)
    const o = parseLoadBalancerArgs(args('lb').filter((a) => !a.startsWith('--health-ca-file=')));
    expect(o.backends).toEqual(byBinary('svc-apiserver').map((n) => `${n}:6443`));
    expect(args('lb')).toContain('--health-ca-file=/cluster/pki/ca.crt');
  });
});

describe('deploy/prometheus.yml', () => {
  it('scrapes every long-running component once, on the port it serves', () => {
    const config = parse(readFileSync(resolve(ROOT, 'deploy/prometheus.yml'), 'utf8')) as {
      scrape_configs: { static_configs: { targets: string[] }[] }[];
    };
    const targets = config.scrape_configs.flatMap((j) => j.static_configs.flatMap((s) => s.targets)).sort();
    const port = (name: string, flag: string, fallback: string): string =>
      args(name)
        .find((a) => a.startsWith(`${flag}=`))
        ?.split('=')[1] ?? fallback;
    const expected = [
      ...byBinary('etcd').map((n) => `${n}:2379`),
      ...byBinary('svc-apiserver').map((n) => `${n}:${port(n, '--secure-port', '')}`),
      ...byBinary('svc-controller-manager').map((n) => `${n}:${port(n, '--secure-port', '')}`),
      ...byBinary('svc-scheduler').map((n) => `${n}:${port(n, '--secure-port', '')}`),
      ...byBinary('deploy/compose-node.sh').map((n) => `${n}:10250`),
    ].sort();
    expect(targets).toEqual(expected);
    expect(readFileSync(resolve(ROOT, 'deploy/compose-node.sh'), 'utf8')).toMatch(/^port: 10250$/m);
  });
});

describe('scripts/cluster.sh', () => {
  const script = readFileSync(resolve(ROOT, 'scripts/cluster.sh'), 'utf8');
  const functionFlags = (fn: string): string[] => {
    const body = script.slice(script.indexOf(`${fn}() {`), script.indexOf('\n}\n', script.indexOf(`${fn}() {`)));
    return flagNames(body.match(/--[a-z][a-z-]*(=\S*)?/g) ?? []);
  };

  it.each([
    ['start_apiserver', 'svc-apiserver'],
    ['start_controller_manager', 'svc-controller-manager'],
    ['start_scheduler', 'svc-scheduler'],
  ])("%s passes the same flags as the compose file's %s", (fn, bin) => {
    const composeFlags = flagNames(args(byBinary(bin)[0] ?? ''));
    expect(composeFlags.length).toBeGreaterThan(5);
    expect(functionFlags(fn)).toEqual(composeFlags);
  });
});
