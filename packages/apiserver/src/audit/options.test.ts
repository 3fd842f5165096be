// The --audit-* flags as parsed: Kubernetes' defaults (per naming) and the values refused with
// exit code 2 and one line.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseFlags, refusal } from '../options-testing.js';

let dir: string;
let policy: string;
let hook: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-audit-flags-'));
  policy = join(dir, 'policy.yaml');
  await writeFile(policy, 'apiVersion: audit.svc.io/v1\nkind: Policy\nrules:\n- level: Metadata\n');
  hook = join(dir, 'hook.svcconfig');
  await writeFile(
    hook,
    'apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: "https://127.0.0.1:9443/audit"}\nusers:\n- name: u\n  user: {token: t}\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n',
  );
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('defaults', () => {
  it('are Kubernetes’: log blocking, batches of one; webhook batch 10000/400/30s, throttled 10 qps burst 15, 10s backoff', () => {
    const { audit } = parseFlags();
    expect(audit.policy).toBeUndefined();
    expect(audit.log).toEqual({
      path: undefined,
      maxAgeDays: 0,
      maxBackups: 0,
      maxSizeMb: 0,
      format: 'json',
      compress: false,
      batch: {
        mode: 'blocking',
        bufferSize: 10_000,
        maxBatchSize: 1,
        maxBatchWaitMs: 0,
        throttleEnable: false,
        throttleQps: 0,
        throttleBurst: 0,
      },
      truncate: { enabled: false, maxBatchSize: 10_485_760, maxEventSize: 102_400 },
      version: 'audit.svc.io/v1',
    });
    expect(audit.webhook).toEqual({
      configFile: undefined,
      initialBackoffMs: 10_000,
      batch: {
        mode: 'batch',
        bufferSize: 10_000,
        maxBatchSize: 400,
        maxBatchWaitMs: 30_000,
        throttleEnable: true,
        throttleQps: 10,
        throttleBurst: 15,
      },
      truncate: { enabled: false, maxBatchSize: 10_485_760, maxEventSize: 102_400 },
      version: 'audit.svc.io/v1',
    });
  });

  it('follow --naming=kubernetes for the events’ version', () => {
    const { audit } = parseFlags('--naming=kubernetes');
    expect(audit.log.version).toBe('audit.k8s.io/v1');
    expect(audit.webhook.version).toBe('audit.k8s.io/v1');
  });
});

describe('given', () => {
  it('reads every flag of the family', () => {
    const { audit } = parseFlags(
      ...['--audit-policy-file', policy, '--audit-log-path', join(dir, 'a.log'), '--audit-log-maxage=3'],
      ...['--audit-log-maxbackup=4', '--audit-log-maxsize=5', '--audit-log-format=legacy', '--audit-log-compress'],
      ...['--audit-log-mode=batch', '--audit-log-batch-buffer-size=7', '--audit-log-batch-max-size=8'],
      ...[
        '--audit-log-batch-max-wait=2s',
        '--audit-log-batch-throttle-enable=true',
        '--audit-log-batch-throttle-qps=1.5',
      ],
      ...[
        '--audit-log-batch-throttle-burst=9',
        '--audit-log-truncate-enabled',
        '--audit-log-truncate-max-batch-size=2000',
      ],
      ...['--audit-log-truncate-max-event-size=1000', '--audit-log-version=audit.svc.io/v1'],
      ...[
        '--audit-webhook-config-file',
        hook,
        '--audit-webhook-mode=blocking-strict',
        '--audit-webhook-initial-backoff=250ms',
      ],
      ...['--audit-webhook-batch-max-size=3', '--audit-webhook-truncate-enabled=true'],
    );
    expect(audit.policy?.rules).toEqual([{ level: 'Metadata' }]);
    expect(audit.log).toMatchObject({ maxAgeDays: 3, maxBackups: 4, maxSizeMb: 5, format: 'legacy', compress: true });
    expect(audit.log.batch).toEqual({
      mode: 'batch',
      bufferSize: 7,
      maxBatchSize: 8,
      maxBatchWaitMs: 2000,
      throttleEnable: true,
      throttleQps: 1.5,
      throttleBurst: 9,
    });
    expect(audit.log.truncate).toEqual({ enabled: true, maxBatchSize: 2000, maxEventSize: 1000 });
    expect(audit.webhook.target).toMatchObject({ server: 'https://127.0.0.1:9443/audit', token: 't' });
    expect(audit.webhook).toMatchObject({ initialBackoffMs: 250, batch: { mode: 'blocking-strict', maxBatchSize: 3 } });
    expect(audit.webhook.truncate.enabled).toBe(true);
  });

  it('takes the deprecated --audit-webhook-batch-initial-backoff', () => {
    expect(parseFlags('--audit-webhook-batch-initial-backoff=1s').audit.webhook.initialBackoffMs).toBe(1000);
  });

  it('checks a backend’s settings only when the backend is on, as Kubernetes', () => {
    expect(parseFlags('--audit-log-mode=nope', '--audit-webhook-batch-max-size=0').audit.log.batch.mode).toBe('nope');
  });
});

describe('refused with one line', () => {
  const log = (): string[] => ['--audit-log-path', join(dir, 'a.log')];
  const webhook = (): string[] => ['--audit-webhook-config-file', hook];
  it.each<[string, () => string[], string]>([
    [
      'a bad log mode',
      () => [...log(), '--audit-log-mode=fast'],
      'invalid audit log mode fast, allowed modes are "batch,blocking,blocking-strict"',
    ],
    ['a bad webhook mode', () => [...webhook(), '--audit-webhook-mode=x'], 'invalid audit webhook mode x'],
    [
      'a bad format',
      () => [...log(), '--audit-log-format=xml'],
      'invalid audit log format xml, allowed formats are "legacy,json"',
    ],
    [
      'a negative maxage',
      () => [...log(), '--audit-log-maxage=-1'],
      "--audit-log-maxage -1 can't be a negative number",
    ],
    [
      'a negative maxbackup',
      () => [...log(), '--audit-log-maxbackup=-1'],
      "--audit-log-maxbackup -1 can't be a negative number",
    ],
    [
      'a negative maxsize',
      () => [...log(), '--audit-log-maxsize=-1'],
      "--audit-log-maxsize -1 can't be a negative number",
    ],
    [
      'a zero buffer',
      () => [...webhook(), '--audit-webhook-batch-buffer-size=0'],
      'invalid audit batch webhook buffer size 0',
    ],
    [
      'a zero batch size',
      () => [...log(), '--audit-log-mode=batch', '--audit-log-batch-max-size=0'],
      'invalid audit batch log max batch size 0',
    ],
    [
      'a zero qps',
      () => [...webhook(), '--audit-webhook-batch-throttle-qps=0'],
      'invalid audit batch webhook throttle QPS 0',
    ],
    [
      'a zero burst',
      () => [...webhook(), '--audit-webhook-batch-throttle-burst=0'],
      'invalid audit batch webhook throttle burst 0',
    ],
    [
      'a zero event size',
      () => [...log(), '--audit-log-truncate-max-event-size=0'],
      'invalid audit truncate log max event size 0',
    ],
    [
      'a batch smaller than an event',
      () => [...log(), '--audit-log-truncate-max-batch-size=10', '--audit-log-truncate-max-event-size=20'],
      'invalid audit truncate log max batch size 10, must be greater than max event size (20)',
    ],
    [
      'an unknown version',
      () => [...log(), '--audit-log-version=audit.svc.io/v1beta1'],
      '--audit-log-version: invalid group version',
    ],
    [
      'the other naming’s version',
      () => [...webhook(), '--audit-webhook-version=audit.k8s.io/v1'],
      '--audit-webhook-version: invalid group version',
    ],
    ['a non-integer size', () => ['--audit-log-maxsize=big'], 'strconv.ParseInt: parsing "big": invalid syntax'],
    [
      'a non-number qps',
      () => ['--audit-webhook-batch-throttle-qps=lots'],
      'strconv.ParseFloat: parsing "lots": invalid syntax',
    ],
    ['a bad duration', () => ['--audit-webhook-initial-backoff=soon'], 'soon'],
    [
      'a missing policy file',
      () => ['--audit-policy-file', join(dir, 'none.yaml')],
      '--audit-policy-file: loading audit policy file: failed to read file path',
    ],
    [
      'a missing webhook file',
      () => ['--audit-webhook-config-file', join(dir, 'none')],
      '--audit-webhook-config-file: initializing audit webhook:',
    ],
  ])('%s', (_what, args, message) => {
    const e = refusal(args());
    expect(e.exitCode).not.toBe(0);
    expect(e.message).toContain(message);
    expect(e.message.split('\n')).toHaveLength(1);
  });

  it('a policy that does not validate', async () => {
    const bad = join(dir, 'bad.yaml');
    await writeFile(bad, 'apiVersion: audit.svc.io/v1\nkind: Policy\nrules:\n- level: Everything\n');
    const e = refusal(['--audit-policy-file', bad]);
    expect(e.message).toBe(
      `error: --audit-policy-file: loading audit policy file: rules[0].level: Unsupported value: "Everything": supported values: "None", "Metadata", "Request", "RequestResponse": from file ${bad}`,
    );
  });
});
