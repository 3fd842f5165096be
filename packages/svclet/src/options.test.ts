import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CommanderError } from 'commander';
import { useNaming } from '@svc/api';
import { ConfigurationError } from './configuration.js';
import { parseSvcletOptions } from './options.js';
import { svcletConfigYaml } from './svclet-testing.js';

const parse = (args: string[]) => parseSvcletOptions(args, { quiet: true });

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'svclet-options-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, fields: Record<string, unknown>): string {
  const p = join(dir, name);
  writeFileSync(p, svcletConfigYaml(fields));
  return p;
}

describe('svclet flags and configuration file', () => {
  it("has the spec's and Kubernetes' defaults", () => {
    const o = parse([]);
    expect(o.svcconfig).toBeUndefined();
    expect(o.certDir).toBe('/var/lib/svclet/pki');
    expect(o.rootDir).toBe('/var/lib/svclet');
    expect(o.config).toMatchObject({
      address: '0.0.0.0',
      port: 10250,
      healthzBindAddress: '127.0.0.1',
      healthzPort: 10248,
      fileCheckFrequency: 20_000,
      httpCheckFrequency: 20_000,
      containerLogMaxFiles: 5,
      containerLogMaxSize: '10Mi',
      svcAPIQPS: 50,
      svcAPIBurst: 100,
      contentType: 'application/vnd.svc.protobuf',
      eventRecordQPS: 50,
      eventBurst: 100,
      cgroupDriver: 'cgroupfs',
      cpuManagerPolicy: 'none',
      hairpinMode: 'promiscuous-bridge',
      maxOpenFiles: 1_000_000,
      imageGCHighThresholdPercent: 85,
      imageGCLowThresholdPercent: 80,
      enforceNodeAllocatable: ['pods'],
      nodeStatusUpdateFrequency: 10_000,
      nodeStatusReportFrequency: 300_000,
      nodeLeaseDurationSeconds: 40,
      evictionHard: {
        'memory.available': '100Mi',
        'nodefs.available': '10%',
        'nodefs.inodesFree': '5%',
        'imagefs.available': '15%',
      },
      authentication: {
        anonymous: { enabled: true },
        webhook: { enabled: false, cacheTTL: 120_000 },
        x509: { clientCAFile: '' },
      },
      authorization: { mode: 'AlwaysAllow', webhook: { cacheAuthorizedTTL: 300_000, cacheUnauthorizedTTL: 30_000 } },
    });
    expect(o.warnings).toEqual([]);
  });

  it('reads the file; flags given on the command line override it; --svcconfig enables API server mode', () => {
    const f = file('c.yaml', {
      port: 11000,
      address: '127.0.0.2',
      healthzPort: 0,
      nodeStatusUpdateFrequency: '2s',
      authentication: { webhook: { enabled: true } },
    });
    const o = parse(['--config', f, '--port', '12000', '--svcconfig', '/x/svclet.conf']);
    expect(o.config).toMatchObject({
      port: 12000,
      address: '127.0.0.2',
      healthzPort: 0,
      nodeStatusUpdateFrequency: 2000,
    });
    expect(o.config.authentication).toEqual({
      anonymous: { enabled: true },
      webhook: { enabled: true, cacheTTL: 120_000 },
      x509: { clientCAFile: '' },
    });
    expect(o.svcconfig).toBe('/x/svclet.conf');
    expect(parse(['--kubeconfig', '/y']).svcconfig).toBe('/y');
  });

  it('takes a relative --config from the working directory, and resolves paths in the file against its directory', () => {
    mkdirSync(join(dir, 'etc'));
    file('etc/c.yaml', {
      staticPodPath: 'manifests',
      tlsCertFile: '/abs/tls.crt',
      tlsPrivateKeyFile: 'tls.key',
      authentication: { x509: { clientCAFile: '../ca.crt' } },
    });
    const cwd = process.cwd();
    process.chdir(dir);
    try {
      const o = parse(['--config', 'etc/c.yaml', '--pod-manifest-path', 'ignored-below']);
      expect(o.config.staticPodPath).toBe('ignored-below');
      const p = parse(['--config', 'etc/c.yaml']);
      expect(p.config.staticPodPath).toBe(join(dir, 'etc/manifests'));
      expect(p.config.tlsCertFile).toBe('/abs/tls.crt');
      expect(p.config.tlsPrivateKeyFile).toBe(join(dir, 'etc/tls.key'));
      expect(p.config.authentication.x509.clientCAFile).toBe(join(dir, 'ca.crt'));
    } finally {
      process.chdir(cwd);
    }
  });

  it('applies --config-dir drop-ins (*.conf) in lexical order after the file and before the flags', () => {
    const f = file('c.yaml', {
      port: 1,
      maxPods: 7,
      authentication: { anonymous: { enabled: false } },
      featureGates: { WatchList: true },
    });
    mkdirSync(join(dir, 'd'));
    file('d/20-b.conf', { port: 3, evictionHard: { 'memory.available': '1Gi' } });
    file('d/10-a.conf', {
      port: 2,
      healthzPort: 4,
      authentication: { webhook: { enabled: true } },
      featureGates: { APIServerTracing: false },
    });
    file('d/30-c.yaml', { port: 99 });
    const o = parse(['--config', f, '--config-dir', join(dir, 'd'), '--healthz-port', '5']);
    expect(o.config).toMatchObject({ port: 3, maxPods: 7, healthzPort: 5 });
    expect(o.config.authentication).toMatchObject({ anonymous: { enabled: false }, webhook: { enabled: true } });
    // Maps replace the earlier value whole; feature gates merge key by key.
    expect(o.config.evictionHard).toEqual({ 'memory.available': '1Gi' });
    expect(o.config.featureGates).toEqual({ WatchList: true, APIServerTracing: false });
    // A drop-in directory without --config works on the defaults.
    expect(parse(['--config-dir', join(dir, 'd')]).config.port).toBe(3);
  });

  it('refuses unknown fields, wrong types and another apiVersion with a clear error; reads JSON too', () => {
    const unknown = file('u.yaml', { port: 1, foo: 2 });
    expect(() => parse(['--config', unknown])).toThrow(ConfigurationError);
    expect(() => parse(['--config', unknown])).toThrow(
      `failed to load svclet config file ${unknown}: strict decoding error: unknown field "foo"`,
    );
    const nested = file('n.yaml', { authentication: { webhook: { enabled: true, cachettl: '1s' } } });
    expect(() => parse(['--config', nested])).toThrow('unknown field "authentication.webhook.cachettl"');
    const typed = file('t.yaml', { port: '10250' });
    expect(() => parse(['--config', typed])).toThrow('field "port": expected an integer, got string');
    const duration = file('d.yaml', { syncFrequency: 60 });
    expect(() => parse(['--config', duration])).toThrow(
      'field "syncFrequency": expected a duration string such as "1m0s", got number',
    );
    const version = join(dir, 'v.yaml');
    writeFileSync(version, 'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n');
    expect(() => parse(['--config', version])).toThrow(
      'expected apiVersion "svclet.config.svc.io/v1beta1" and kind "SvcletConfiguration"',
    );
    const json = join(dir, 'c.json');
    writeFileSync(
      json,
      JSON.stringify({
        apiVersion: 'svclet.config.svc.io/v1beta1',
        kind: 'SvcletConfiguration',
        port: 10251,
        syncFrequency: '30s',
      }),
    );
    expect(parse(['--config', json]).config).toMatchObject({ port: 10251, syncFrequency: 30_000 });
    expect(() => parse(['--config', join(dir, 'missing.yaml')])).toThrow(
      /failed to load svclet config file .*missing\.yaml: ENOENT/,
    );
  });

  it('warns once per deprecated flag given, however often; flags without a config field are not deprecated', () => {
    const o = parse([
      '--port',
      '1',
      '--port',
      '2',
      '--anonymous-auth=false',
      '--cert-dir',
      '/c',
      '--hostname-override',
      'Node-A',
      '--node-ip',
      '10.0.0.1',
    ]);
    expect(o.config.port).toBe(2);
    expect(o.config.authentication.anonymous.enabled).toBe(false);
    expect(o.warnings).toEqual([
      "Flag --port has been deprecated, This parameter should be set via the config file specified by the Svclet's --config flag.",
      "Flag --anonymous-auth has been deprecated, This parameter should be set via the config file specified by the Svclet's --config flag.",
    ]);
    expect(o).toMatchObject({ certDir: '/c', hostnameOverride: 'Node-A', nodeIps: ['10.0.0.1'] });
  });

  it("takes feature gates as plain Key=bool pairs, merged over the file's, and refuses unknown or malformed ones", () => {
    const f = file('g.yaml', { featureGates: { WatchList: true, APIServerTracing: false } });
    const o = parse([
      '--config',
      f,
      '--feature-gates',
      'APIServerTracing=true,AllAlpha=false',
      '--feature-gates=StorageVersionAPI=true',
    ]);
    expect(o.config.featureGates).toEqual({
      WatchList: true,
      APIServerTracing: true,
      AllAlpha: false,
      StorageVersionAPI: true,
    });
    expect(o.featureGates.enabled('WatchList')).toBe(true);
    expect(o.featureGates.enabled('StorageVersionAPI')).toBe(true);
    // The node agent's stages differ from the API server's (spec, Versioning 3).
    expect(o.featureGates.enabled('ConsistentListFromCache')).toBe(false);
    expect(parse(['--feature-gates', 'AllAlpha=true']).featureGates.enabled('ConsistentListFromCache')).toBe(true);
    expect(() => parse(['--feature-gates', 'NoSuchGate=true'])).toThrow('unrecognized feature gate: NoSuchGate');
    expect(() => parse(['--feature-gates', 'svc:WatchList=true'])).toThrow('unrecognized feature gate: svc:WatchList');
    expect(() => parse(['--feature-gates', 'WatchList'])).toThrow(CommanderError);
    expect(() => parse(['--feature-gates', 'WatchList=maybe'])).toThrow(/invalid value of WatchList=maybe/);
    const bad = file('b.yaml', { featureGates: { WatchList: 'yes' } });
    expect(() => parse(['--config', bad])).toThrow(
      'field "featureGates": expected a boolean for key "WatchList", got string',
    );
  });

  it("parses the map, list and taint flags in pflag's formats", () => {
    const o = parse([
      '--eviction-hard',
      'memory.available<200Mi,nodefs.available<5%',
      '--system-reserved',
      'cpu=200m,memory=500Mi',
      '--register-with-taints',
      'a=b:NoSchedule,c:NoExecute',
      '--manifest-url-header',
      'a:hello,b:again',
      '--manifest-url-header',
      'a:world',
      '--node-labels',
      'zone=z1,rack=r2',
      '--cluster-dns',
      '10.0.0.10,10.0.0.11',
      '--sync-frequency',
      '30s',
    ]);
    expect(o.config.evictionHard).toEqual({ 'memory.available': '200Mi', 'nodefs.available': '5%' });
    expect(o.config.systemReserved).toEqual({ cpu: '200m', memory: '500Mi' });
    expect(o.config.registerWithTaints).toEqual([
      { key: 'a', value: 'b', effect: 'NoSchedule' },
      { key: 'c', effect: 'NoExecute' },
    ]);
    expect(o.config.staticPodURLHeader).toEqual({ a: ['hello', 'world'], b: ['again'] });
    expect(o.nodeLabels).toEqual({ zone: 'z1', rack: 'r2' });
    expect(o.config.clusterDNS).toEqual(['10.0.0.10', '10.0.0.11']);
    expect(o.config.syncFrequency).toBe(30_000);
  });

  it("spells the file's apiVersion and the default content type by --naming", () => {
    const f = join(dir, 'k.yaml');
    writeFileSync(f, 'apiVersion: svclet.config.k8s.io/v1beta1\nkind: SvcletConfiguration\nport: 10255\n');
    try {
      const o = parse(['--naming=kubernetes', '--config', f]);
      expect(o.config).toMatchObject({ port: 10255, contentType: 'application/vnd.kubernetes.protobuf' });
      expect(o.naming).toBe('kubernetes');
    } finally {
      useNaming('svc');
    }
    expect(() => parse(['--config', f])).toThrow('expected apiVersion "svclet.config.svc.io/v1beta1"');
  });

  it('validates the merged configuration', () => {
    expect(() => parse(['--container-log-max-files', '1'])).toThrow(
      'containerLogMaxFiles (--container-log-max-files) 1 must be at least 2',
    );
    expect(() => parse(['--authorization-mode', 'RBAC'])).toThrow(
      'authorization.mode (--authorization-mode) "RBAC" must be AlwaysAllow or Webhook',
    );
    expect(() => parse(['--image-gc-low-threshold', '90'])).toThrow('must be less than imageGCHighThresholdPercent');
    expect(() => parse(['--eviction-hard', 'memory.free<1Gi'])).toThrow('unsupported eviction signal memory.free');
    expect(() => parse(['--port', '70000'])).toThrow(CommanderError);
    expect(() => parse(['--cloud-provider', 'aws'])).toThrow(CommanderError);
    const f = file('z.yaml', { port: 0 });
    expect(() => parse(['--config', f])).toThrow('port (--port) 0 must be between 1 and 65535');
  });
});
