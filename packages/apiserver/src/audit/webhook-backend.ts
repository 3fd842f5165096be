import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { sleep } from '@svc/machinery';
import type { WebhookTarget } from '../webhook/kubeconfig.js';
import type { AuditBackend, PluginErrors } from './backend.js';
import { encodeEventList, type AuditRecord } from './event.js';

/** Kubernetes' retry schedule for webhooks: this many attempts, each wait 1.5 times the last, plus up to 20% jitter. */
const ATTEMPTS = 5;
const FACTOR = 1.5;
const JITTER = 0.2;
/** Kubernetes' deadline of one webhook call, the answer included. */
const CALL_TIMEOUT_MS = 30_000;

export interface WebhookBackendOptions {
  target: WebhookTarget;
  apiVersion: string;
  /** `--audit-webhook-initial-backoff`: the wait before the first retry. */
  initialBackoffMs: number;
  errors: PluginErrors;
  timeoutMs?: number;
}

/**
 * Kubernetes' webhook backend: each batch is POSTed as one `EventList` to the kubeconfig's
 * server; any failure (connection, timeout, non-2xx answer) is retried with exponential backoff
 * from the initial backoff, five attempts in all; a batch that never gets through is reported
 * lost (plugin `webhook`).
 */
export class WebhookBackend implements AuditBackend {
  readonly name = 'webhook';
  private readonly agent: HttpAgent;
  private readonly url: URL;

  constructor(private readonly o: WebhookBackendOptions) {
    this.url = new URL(o.target.server);
    const t = o.target;
    this.agent =
      this.url.protocol === 'http:'
        ? new HttpAgent({ keepAlive: true })
        : new HttpsAgent({
            keepAlive: true,
            ca: t.caPem,
            cert: t.certPem,
            key: t.keyPem,
            rejectUnauthorized: !t.insecureSkipTlsVerify,
          });
  }

  async processEvents(records: readonly AuditRecord[]): Promise<boolean> {
    if (records.length === 0) return true;
    const body = encodeEventList(records, this.o.apiVersion);
    let wait = this.o.initialBackoffMs;
    for (let attempt = 1; ; attempt++) {
      try {
        await this.post(body);
        return true;
      } catch (e) {
        if (attempt >= ATTEMPTS) {
          this.o.errors(this.name, e, records);
          return false;
        }
      }
      await sleep(wait * (1 + Math.random() * JITTER));
      wait *= FACTOR;
    }
  }

  shutdown(): Promise<void> {
    this.agent.destroy();
    return Promise.resolve();
  }

  /** One POST; a kept-alive connection found closed is retried at once on a new one. */
  private async post(body: string): Promise<void> {
    try {
      await this.send(body);
    } catch (e) {
      if (!(e instanceof StaleConnection)) throw e;
      await this.send(body);
    }
  }

  private send(body: string): Promise<void> {
    const timeoutMs = this.o.timeoutMs ?? CALL_TIMEOUT_MS;
    return new Promise((resolve, reject) => {
      const headers: Record<string, string> = {
        'Content-Type': 'application/json',
        Accept: 'application/json, */*',
        'Content-Length': String(Buffer.byteLength(body)),
      };
      if (this.o.target.token) headers.Authorization = `Bearer ${this.o.target.token}`;
      const options = { method: 'POST', agent: this.agent, headers };
      const onResponse = (res: IncomingMessage): void => {
        const chunks: Buffer[] = [];
        res.on('data', (d: Buffer) => chunks.push(d));
        res.on('error', reject);
        res.on('end', () => {
          clearTimeout(timer);
          const code = res.statusCode ?? 0;
          if (code >= 200 && code < 300) resolve();
          else
            reject(
              new Error(
                `the audit webhook answered ${code}: ${Buffer.concat(chunks).toString('utf8').slice(0, 256).trim()}`,
              ),
            );
        });
      };
      const req =
        this.url.protocol === 'http:'
          ? httpRequest(this.url, options, onResponse)
          : httpsRequest(this.url, options, onResponse);
      const timer = setTimeout(
        () => req.destroy(new Error(`the audit webhook did not answer within ${timeoutMs} ms`)),
        timeoutMs,
      );
      req.on('error', (e: NodeJS.ErrnoException) => {
        clearTimeout(timer);
        const stale = req.reusedSocket && (e.code === 'ECONNRESET' || e.code === 'EPIPE');
        reject(stale ? new StaleConnection(e.message) : e);
      });
      req.end(body);
    });
  }
}

/** A reused connection that turned out closed: the request never reached the webhook. */
class StaleConnection extends Error {}
