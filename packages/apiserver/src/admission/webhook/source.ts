import {
  group,
  type ApiObject,
  type LabelSelectorObject,
  type MatchCondition,
  type MutatingWebhook,
  type MutatingWebhookConfiguration,
} from '@svc/api';
import { labelSelectorFromObject, type LabelSelector } from '@svc/machinery';
import { StoreInformer } from '../../authz/rbac/informer.js';
import type { GenericStore } from '../../registry/store.js';
import { WebhookClient, type ServiceResolver, type WebhookClientConfig } from '../../webhook/client.js';
import { compileMatchCondition } from './match-conditions.js';
import type { Program } from '../policy/compile.js';

export type WebhookKind = 'mutating' | 'validating';

/** One compiled matchCondition: its program, or why it does not compile (a stored object from before a change of rules). */
export interface CompiledCondition {
  name: string;
  program?: Program;
  error?: string;
}

/**
 * One webhook of a configuration, ready to match and call (Kubernetes' WebhookAccessor):
 * selectors parsed and conditions compiled once, its client shared by every webhook with the
 * same clientConfig.
 */
export interface WebhookAccessor {
  /** `<configuration>/<webhook>/<n>`: unique even when a stored configuration repeats a name. */
  uid: string;
  configurationName: string;
  /** As stored (v1 defaults applied); `reinvocationPolicy` only for mutating webhooks. */
  hook: MutatingWebhook;
  namespaceSelector: ParsedSelector;
  objectSelector: ParsedSelector;
  matchConditions: readonly CompiledCondition[];
  client: WebhookClient;
}

/** A parsed label selector, or the error parsing it (a 500 when it is needed). */
export type ParsedSelector = { selector: LabelSelector } | { error: string };

function parseSelector(s: LabelSelectorObject | undefined): ParsedSelector {
  try {
    return { selector: labelSelectorFromObject(s ?? {}) };
  } catch (e) {
    return { error: (e as Error).message };
  }
}

function compileConditions(conditions: readonly MatchCondition[] | undefined): CompiledCondition[] {
  return (conditions ?? []).map((c) => {
    const compiled = compileMatchCondition(c.expression ?? '');
    return 'program' in compiled
      ? { name: c.name, program: compiled.program }
      : { name: c.name, error: compiled.error };
  });
}

export interface WebhookSourceOptions {
  /** The store of the configurations; undefined when the type is not served. */
  store(): GenericStore | undefined;
  resolveService: ServiceResolver;
  signal: AbortSignal;
  onError(e: unknown): void;
}

/** How long a request waits for the first list of configurations (Kubernetes' WaitForReady). */
const READY_WAIT_MS = 10_000;

/**
 * The webhooks of every Mutating- or ValidatingWebhookConfiguration, from an informer over the
 * server's own store: configurations sorted by name, webhooks in their order. The informer
 * starts with the first request that asks (the stores exist by then) and runs until the server
 * stops; a configuration's webhooks are rebuilt only when it changes. Clients are shared by
 * clientConfig and closed once no webhook uses them.
 */
export class WebhookSource {
  private informer?: StoreInformer;
  private synced = false;
  private readySoon?: Promise<boolean>;
  private stale = true;
  private accessors: WebhookAccessor[] = [];
  private readonly byConfiguration = new Map<string, { resourceVersion: string; accessors: WebhookAccessor[] }>();
  private readonly clients = new Map<string, WebhookClient>();

  constructor(private readonly o: WebhookSourceOptions) {
    o.signal.addEventListener('abort', () => this.closeClients(new Set()), { once: true });
  }

  /** True once the configurations are listed; a promise of it (false after 10 s) before. */
  ready(): boolean | Promise<boolean> {
    if (this.synced) return true;
    this.readySoon ??= this.start();
    return this.readySoon;
  }

  private async start(): Promise<boolean> {
    const store = this.o.store();
    if (!store) {
      this.synced = true;
      return true;
    }
    const informer = new StoreInformer(() => store, this.o.onError);
    informer.onChange(() => {
      this.stale = true;
    });
    this.informer = informer;
    informer.run(this.o.signal).catch(this.o.onError);
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), READY_WAIT_MS);
      timer.unref();
    });
    const ok = await Promise.race([informer.synced.then(() => true), timedOut]);
    clearTimeout(timer);
    if (ok) this.synced = true;
    else this.readySoon = undefined;
    return ok;
  }

  /** The webhooks in calling order (empty before `ready`). */
  webhooks(): readonly WebhookAccessor[] {
    if (!this.stale || !this.informer) return this.accessors;
    this.stale = false;
    const configurations = [...this.informer.list()].sort((a, b) =>
      (a.metadata.name ?? '') < (b.metadata.name ?? '') ? -1 : 1,
    );
    const seen = new Set<string>();
    const out: WebhookAccessor[] = [];
    for (const c of configurations) {
      const name = c.metadata.name ?? '';
      seen.add(name);
      let cached = this.byConfiguration.get(name);
      if (!cached || cached.resourceVersion !== c.metadata.resourceVersion) {
        cached = { resourceVersion: c.metadata.resourceVersion ?? '', accessors: this.build(c) };
        this.byConfiguration.set(name, cached);
      }
      out.push(...cached.accessors);
    }
    for (const name of this.byConfiguration.keys()) if (!seen.has(name)) this.byConfiguration.delete(name);
    this.closeClients(new Set(out.map((a) => a.client)));
    this.accessors = out;
    return out;
  }

  private build(c: ApiObject): WebhookAccessor[] {
    const configurationName = c.metadata.name ?? '';
    const counts = new Map<string, number>();
    return ((c as MutatingWebhookConfiguration).webhooks ?? []).map((hook) => {
      const n = counts.get(hook.name) ?? 0;
      counts.set(hook.name, n + 1);
      return {
        uid: `${configurationName}/${hook.name}/${n}`,
        configurationName,
        hook,
        namespaceSelector: parseSelector(hook.namespaceSelector),
        objectSelector: parseSelector(hook.objectSelector),
        matchConditions: compileConditions(hook.matchConditions),
        client: this.client(hook.clientConfig),
      };
    });
  }

  private client(cc: WebhookClientConfig | undefined): WebhookClient {
    const config = cc ?? {};
    const key = JSON.stringify([config.url, config.service, config.caBundle]);
    let client = this.clients.get(key);
    if (!client) {
      client = new WebhookClient(config, this.o.resolveService);
      this.clients.set(key, client);
    }
    return client;
  }

  private closeClients(keep: ReadonlySet<WebhookClient>): void {
    for (const [key, client] of this.clients) {
      if (keep.has(client)) continue;
      client.close();
      this.clients.delete(key);
    }
  }
}

/** The configuration type a plugin reads: `admissionregistration.<suffix>/v1` mutating or validating. */
export function configurationResource(kind: WebhookKind): { group: string; version: string; resource: string } {
  return {
    group: group('admissionregistration'),
    version: 'v1',
    resource: kind === 'mutating' ? 'mutatingwebhookconfigurations' : 'validatingwebhookconfigurations',
  };
}
