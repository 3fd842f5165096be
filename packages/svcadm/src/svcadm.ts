import { spawn } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { Command, CommanderError, Option } from 'commander';
import { isNamingScheme, isNotFound, naming, useNaming } from '@svc/api';
import { RestClient, ResourceClient, loadSvcconfig, svcconfigPath, type GroupVersionResource } from '@svc/client';
import { boolOption, durationOption, listOption } from '@svc/component-base';
import { BOOTSTRAP_TOKEN_SECRET_PREFIX } from '@svc/machinery';
import { bootstrapSvcconfig, ensureObject, joinObjects } from './cluster-info.js';
import { initPki } from './pki.js';
import { discoverCluster, serverUrl } from './discovery.js';
import { certificatesOfPem, publicKeyPin, PublicKeyPins } from './pubkey-pin.js';
import {
  TOKEN_USAGES,
  defaultNodeTokenGroup,
  generateToken,
  parseToken,
  tokenFromSecret,
  tokenSecret,
  tokenTable,
  validateGroups,
  validateUsages,
  type BootstrapToken,
} from './token.js';

/** Where `svcadm` writes: stdout and stderr of the process, or a test's buffers. */
export interface SvcadmIo {
  out(text: string): void;
  err(text: string): void;
}

/** Kubernetes' defaults, with `svc` paths. */
export const DEFAULT_ADMIN_SVCCONFIG = '/etc/svc/admin.conf';
export const DEFAULT_BOOTSTRAP_SVCCONFIG = '/etc/svc/bootstrap-svclet.conf';
export const DEFAULT_SVCLET_SVCCONFIG = '/etc/svc/svclet.conf';

/** An error the user made in what they asked (exit 2, like a bad flag). */
class UsageError extends Error {}

const SECRETS: GroupVersionResource = { group: '', version: 'v1', resource: 'secrets' };

function adminClient(flag: string | undefined): RestClient {
  return new RestClient(loadSvcconfig(svcconfigPath(flag) ?? DEFAULT_ADMIN_SVCCONFIG));
}

async function withAdmin<T>(flag: string | undefined, f: (client: RestClient) => Promise<T>): Promise<T> {
  const client = adminClient(flag);
  try {
    return await f(client);
  } finally {
    client.close();
  }
}

/** `--svcconfig` (and its alias `--kubeconfig`) on `cmd`. */
function withSvcconfig(cmd: Command): Command {
  return cmd
    .addOption(
      new Option(
        '--svcconfig <file>',
        `The svcconfig file to use when talking to the cluster (default: KUBECONFIG, else ${DEFAULT_ADMIN_SVCCONFIG}).`,
      ),
    )
    .addOption(new Option('--kubeconfig <file>').hideHelp());
}

interface AdminFlags {
  svcconfig?: string;
  kubeconfig?: string;
}
const adminFlag = (o: AdminFlags): string | undefined => o.svcconfig ?? o.kubeconfig;

/** `svcadm join <host:port> --token <t> --discovery-token-ca-cert-hash sha256:<hash>` for an admin svcconfig. */
function joinCommand(config: { server: string; caPem?: string }, token: string): string {
  if (!config.caPem)
    throw new Error(
      'the svcconfig names no certificate authority to pin (certificate-authority or certificate-authority-data)',
    );
  const hashes = certificatesOfPem(config.caPem)
    .map((c) => ` --discovery-token-ca-cert-hash ${publicKeyPin(c)}`)
    .join('');
  return `svcadm join ${new URL(config.server).host} --token ${token}${hashes}\n`;
}

function tokenCommands(io: SvcadmIo, token: Command): void {
  token.description('Manage bootstrap tokens.');
  withSvcconfig(token.command('create'))
    .description('Create a bootstrap token on the server and print it.')
    .argument('[token]', 'The token to create (<id>.<secret>); a random one when absent.')
    .addOption(
      durationOption(
        '--ttl',
        'The duration before the token is automatically deleted (e.g. 1s, 2m, 3h). If set to 0, the token will never expire.',
        24 * 3600_000,
      ),
    )
    .addOption(
      listOption(
        '--usages <usages>',
        `Describes the ways in which this token can be used. Valid options: [${TOKEN_USAGES.join(',')}].`,
        ['signing', 'authentication'],
      ),
    )
    .addOption(
      listOption(
        '--groups <groups>',
        'Extra groups that this token will authenticate as when used for authentication. Must match "\\Asystem:bootstrappers:[a-z0-9:-]{0,255}[a-z0-9]\\z".',
        [defaultNodeTokenGroup()],
      ),
    )
    .addOption(new Option('--description <text>', 'A human friendly description of how this token is used.'))
    .addOption(
      new Option(
        '--print-join-command',
        'Instead of printing only the token, print the full "svcadm join" command for it.',
      ),
    )
    .action(
      async (
        given: string | undefined,
        o: AdminFlags & {
          ttl: number;
          usages: string[];
          groups: string[];
          description?: string;
          printJoinCommand?: boolean;
        },
      ) => {
        const text = given ?? generateToken();
        let parsed: { id: string; secret: string };
        try {
          parsed = parseToken(text);
          validateUsages(o.usages);
          validateGroups(o.groups);
        } catch (e) {
          throw new UsageError((e as Error).message);
        }
        if (o.ttl < 0) throw new UsageError('--ttl must not be negative');
        const t: BootstrapToken = {
          ...parsed,
          description: o.description,
          usages: o.usages,
          groups: o.groups,
          expires: o.ttl > 0 ? Date.now() + o.ttl : undefined,
        };
        await withAdmin(adminFlag(o), async (client) => {
          const printed = o.printJoinCommand ? joinCommand(client.config, text) : `${text}\n`;
          try {
            await new ResourceClient(client, SECRETS).namespace(naming().systemNamespace).create(tokenSecret(t));
          } catch (e) {
            if ((e as { code?: number }).code === 409)
              throw new Error(`a token with id ${JSON.stringify(t.id)} already exists`, { cause: e });
            throw e;
          }
          io.out(printed);
        });
      },
    );
  withSvcconfig(token.command('list'))
    .description('List bootstrap tokens on the server.')
    .action(async (o: AdminFlags) => {
      await withAdmin(adminFlag(o), async (client) => {
        const list = await new ResourceClient(client, SECRETS).namespace(naming().systemNamespace).list();
        const tokens = list.items
          .map(tokenFromSecret)
          .filter((t): t is BootstrapToken => t !== undefined)
          .sort((a, b) => a.id.localeCompare(b.id));
        io.out(tokenTable(tokens, Date.now()));
      });
    });
  withSvcconfig(token.command('delete'))
    .description('Delete bootstrap tokens on the server, by id or by whole token.')
    .argument('<token...>', 'Token ids (<id>) or tokens (<id>.<secret>).')
    .action(async (given: string[], o: AdminFlags) => {
      const ids = given.map((g) => {
        if (/^[a-z0-9]{6}$/.test(g)) return g;
        try {
          return parseToken(g).id;
        } catch {
          throw new UsageError(
            `given token ${JSON.stringify(g)} didn't match pattern "^[a-z0-9]{6}$" or "^([a-z0-9]{6})\\.([a-z0-9]{16})$"`,
          );
        }
      });
      await withAdmin(adminFlag(o), async (client) => {
        const secrets = new ResourceClient(client, SECRETS).namespace(naming().systemNamespace);
        for (const id of ids) {
          try {
            await secrets.delete(`${BOOTSTRAP_TOKEN_SECRET_PREFIX}${id}`);
          } catch (e) {
            throw new Error(
              `failed to delete bootstrap token ${JSON.stringify(id)}: ${isNotFound(e) ? 'not found' : (e as Error).message}`,
              { cause: e },
            );
          }
          io.out(`bootstrap token ${JSON.stringify(id)} deleted\n`);
        }
      });
    });
  token
    .command('ca-cert-hash')
    .description('Print the public-key pin (sha256:<hex>) of each CA certificate, for --discovery-token-ca-cert-hash.')
    .addOption(new Option('--ca-file <file>', 'PEM file of the cluster CA.').makeOptionMandatory())
    .action(async (o: { caFile: string }) => {
      const certs = certificatesOfPem(await readFile(o.caFile, 'utf8'));
      if (certs.length === 0) throw new Error(`${o.caFile}: no CERTIFICATE block`);
      for (const c of certs) io.out(`${publicKeyPin(c)}\n`);
    });
}

function initCommands(io: SvcadmIo, init: Command): void {
  init.description('Set up the control plane for nodes to join.');
  init
    .command('pki')
    .description(
      'Create the cluster CA and the certificates of the control plane (kept when present): ca, apiserver, apiserver-svclet-client, admin, controller-manager, scheduler, node-simulator, sa.key, and node-client-<name> for each of --node-names.',
    )
    .addOption(new Option('--cert-dir <dir>', 'Where to write them.').default('/etc/svc/pki'))
    .addOption(
      listOption(
        '--apiserver-cert-extra-sans <sans>',
        "Extra DNS names and IPs of the API server's serving certificate.",
      ),
    )
    .addOption(
      listOption(
        '--node-names <names>',
        "Nodes of this machine: a client certificate of each node's identity (node-client-<name>), for its node agent to start with instead of a bootstrap token.",
      ),
    )
    .action(async (o: { certDir: string; apiserverCertExtraSans?: string[]; nodeNames?: string[] }) => {
      const written = await initPki({
        certDir: o.certDir,
        apiserverSans: o.apiserverCertExtraSans ?? [],
        nodeNames: o.nodeNames ?? [],
      });
      for (const f of written) io.out(`[certs] wrote ${f.base} (${f.purpose}) in ${o.certDir}\n`);
      if (written.length === 0) io.out(`[certs] everything is already in ${o.certDir}\n`);
    });
  withSvcconfig(init.command('cluster-info'))
    .description(
      `Publish the signed-to-be "cluster-info" ConfigMap (server and CA) in the public namespace, let anonymous users read it, and bind the bootstrap-token group to the node-bootstrap roles. Idempotent.`,
    )
    .addOption(new Option('--server <url>', "The API server URL nodes use (default: the svcconfig's server)."))
    .action(async (o: AdminFlags & { server?: string }) => {
      await withAdmin(adminFlag(o), async (client) => {
        const caPem = client.config.caPem;
        if (!caPem) throw new Error('the svcconfig names no certificate authority to publish');
        for (const { gvr, obj } of joinObjects(o.server ? serverUrl(o.server) : client.config.server, caPem)) {
          const created = await ensureObject(client, gvr, obj);
          const where = obj.metadata.namespace ? ` in namespace ${JSON.stringify(obj.metadata.namespace)}` : '';
          io.out(
            `[bootstrap-token] ${created ? 'created' : 'updated'} ${obj.kind} ${JSON.stringify(obj.metadata.name)}${where}\n`,
          );
        }
      });
    });
}

interface JoinFlags {
  token?: string;
  discoveryTokenCaCertHash?: string[];
  discoveryTokenUnsafeSkipCaVerification: boolean;
  discoveryTimeout: number;
  bootstrapKubeconfig: string;
  svcletSvcconfig: string;
  svcletPath: string;
  start: boolean;
}

/** Runs the node agent with the bootstrap svcconfig; resolves with its exit code, passing SIGINT/SIGTERM on. */
function runSvclet(path: string, args: string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(path, args, { stdio: 'inherit' });
    const forward = (sig: NodeJS.Signals) => (): void => {
      child.kill(sig);
    };
    const onInt = forward('SIGINT');
    const onTerm = forward('SIGTERM');
    process.on('SIGINT', onInt);
    process.on('SIGTERM', onTerm);
    const done = (): void => {
      process.off('SIGINT', onInt);
      process.off('SIGTERM', onTerm);
    };
    child.on('error', (e) => {
      done();
      reject(new Error(`starting ${path}: ${e.message}`));
    });
    child.on('exit', (code, signal) => {
      done();
      resolve(code ?? (signal ? 128 : 1));
    });
  });
}

function joinCommandDef(io: SvcadmIo, join: Command, setExit: (code: number) => void): void {
  join
    .description(
      'Join this machine to a cluster: discover it with a bootstrap token, write a bootstrap svcconfig and start svclet with it.',
    )
    .argument('<server>', 'The API server: host:port or https URL.')
    .argument('[svclet-args...]', 'Arguments for svclet, after --.')
    .addOption(
      new Option(
        '--token <token>',
        'The bootstrap token (<id>.<secret>) used to verify cluster-info and to authenticate the node agent until it has its certificate.',
      ),
    )
    .addOption(
      listOption(
        '--discovery-token-ca-cert-hash <hashes>',
        'For token-based discovery, validate that the root CA public key matches this hash (format: "sha256:<hex>"; repeatable).',
      ),
    )
    .addOption(
      boolOption(
        '--discovery-token-unsafe-skip-ca-verification',
        'For token-based discovery, allow joining without --discovery-token-ca-cert-hash pinning.',
        false,
      ),
    )
    .addOption(
      durationOption(
        '--discovery-timeout',
        'How long to wait for cluster-info to be reachable and signed for the token.',
        300_000,
      ),
    )
    .addOption(
      new Option('--bootstrap-kubeconfig <file>', 'Where to write the bootstrap svcconfig.').default(
        DEFAULT_BOOTSTRAP_SVCCONFIG,
      ),
    )
    .addOption(
      new Option(
        '--svclet-svcconfig <file>',
        'The svcconfig svclet writes once it has its client certificate (its --svcconfig).',
      ).default(DEFAULT_SVCLET_SVCCONFIG),
    )
    .addOption(new Option('--svclet-path <file>', 'The svclet binary.').default('svclet'))
    .addOption(new Option('--no-start', 'Write the bootstrap svcconfig and stop; do not start svclet.'))
    .action(async (server: string, svcletArgs: string[], o: JoinFlags) => {
      if (!o.token) throw new UsageError('--token is required');
      let token: { id: string; secret: string };
      let pins: PublicKeyPins;
      try {
        token = parseToken(o.token);
        pins = new PublicKeyPins(o.discoveryTokenCaCertHash ?? []);
      } catch (e) {
        throw new UsageError((e as Error).message);
      }
      if (pins.empty && !o.discoveryTokenUnsafeSkipCaVerification) {
        throw new UsageError(
          'using token-based discovery without --discovery-token-ca-cert-hash can be unsafe; pass --discovery-token-ca-cert-hash sha256:<hash> (see "svcadm token ca-cert-hash"), or --discovery-token-unsafe-skip-ca-verification to continue',
        );
      }
      const cluster = await discoverCluster({
        endpoint: server,
        token,
        pins,
        unsafeSkipCaVerification: o.discoveryTokenUnsafeSkipCaVerification,
        timeoutMs: o.discoveryTimeout,
        log: (l) => io.err(`${l}\n`),
      });
      await mkdir(dirname(o.bootstrapKubeconfig), { recursive: true });
      await writeFile(o.bootstrapKubeconfig, bootstrapSvcconfig({ ...cluster, token: o.token }), { mode: 0o600 });
      io.out(`[join] wrote the bootstrap svcconfig for ${cluster.server} to ${o.bootstrapKubeconfig}\n`);
      if (!o.start) return;
      const args = ['--bootstrap-kubeconfig', o.bootstrapKubeconfig, '--svcconfig', o.svcletSvcconfig, ...svcletArgs];
      io.out(`[join] starting ${o.svcletPath} ${args.join(' ')}\n`);
      setExit(await runSvclet(o.svcletPath, args));
    });
}

/** The `svcadm` command tree, writing to `io`; commander never exits the process. */
export function svcadmCommand(io: SvcadmIo, setExit: (code: number) => void = () => undefined): Command {
  const program = new Command('svcadm')
    .description('Bootstrap tokens, cluster-info, and joining nodes to a cluster.')
    .addOption(
      new Option('--naming <scheme>', 'Spelling of product identifiers: svc, or kubernetes.')
        .default('svc')
        .choices(['svc', 'kubernetes']),
    )
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.out(s), writeErr: (s) => io.err(s), outputError: () => undefined })
    .showHelpAfterError(false);
  program.hook('preAction', (root) => {
    const scheme = String(root.opts<{ naming: string }>().naming);
    if (isNamingScheme(scheme)) useNaming(scheme);
  });
  tokenCommands(io, program.command('token'));
  initCommands(io, program.command('init'));
  joinCommandDef(io, program.command('join'), setExit);
  return program;
}

/**
 * Runs `svcadm` with `argv` (without node and script); resolves with the exit code: 0 done
 * (help included), 1 the operation failed, 2 bad flags or arguments. Errors are one line on
 * `io.err`, `Error: <message>`.
 */
export async function runSvcadm(argv: string[], io: SvcadmIo): Promise<number> {
  let code = 0;
  const program = svcadmCommand(io, (c) => {
    code = c;
  });
  try {
    await program.parseAsync(argv, { from: 'user' });
    return code;
  } catch (e) {
    if (e instanceof CommanderError) {
      if (e.code === 'commander.helpDisplayed' || e.code === 'commander.version') return 0;
      if (e.code === 'commander.help' || e.code === 'commander.executeSubCommandAsync') return 2;
      io.err(`${e.message.replace(/^error: /, 'Error: ').split('\n')[0] ?? ''}\n`);
      return 2;
    }
    io.err(`Error: ${(e as Error).message.split('\n')[0] ?? ''}\n`);
    return e instanceof UsageError ? 2 : 1;
  }
}
