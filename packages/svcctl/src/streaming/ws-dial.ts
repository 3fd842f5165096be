/**
 * Opens a WebSocket to a streaming subresource of the API server (`pods/<name>/exec`,
 * `portforward`) with the session's credentials: TLS (CA, client certificate), bearer token
 * (also from a file or an exec plugin), impersonation, the CLI's User-Agent. An answer other
 * than 101 is read and thrown as the server's Status, as kubectl reports it.
 */
import { readFileSync } from 'node:fs';
import WebSocket from 'ws';
import { ExecCredentialProvider } from '@svc/client/rest';
import { NAMINGS } from '@svc/api/names';
import type { Status } from '@svc/api/types';
import { CliError } from '../errors.js';
import type { GlobalFlags } from '../flags.js';
import type { Session } from '../session.js';
import { userAgent } from '../version-info.js';

export interface Dialled {
  ws: WebSocket;
  /** The subprotocol the server chose. */
  protocol: string;
}

async function credentials(session: Session): Promise<{ token?: string; cert?: string; key?: string }> {
  const u = session.config.user;
  if (u.exec) {
    const c = await new ExecCredentialProvider(u.exec, session.config).get();
    return { token: c.token, cert: c.clientCertificateData ?? u.clientCertPem, key: c.clientKeyData ?? u.clientKeyPem };
  }
  const token = u.token ?? (u.tokenFile ? readFileSync(u.tokenFile, 'utf8').trim() : undefined);
  return { token, cert: u.clientCertPem, key: u.clientKeyPem };
}

/** What a streaming request carries: the session's credentials and impersonation, the CLI's User-Agent. */
export async function streamAuth(
  session: Session,
  globals: GlobalFlags,
): Promise<{ headers: Record<string, string | string[]>; cert?: string; key?: string }> {
  const c = await credentials(session);
  const headers: Record<string, string | string[]> = { 'User-Agent': userAgent(NAMINGS.svc.cliName) };
  if (c.token) headers.Authorization = `Bearer ${c.token}`;
  if (globals.as) headers['Impersonate-User'] = globals.as;
  if (globals.asUid) headers['Impersonate-Uid'] = globals.asUid;
  if (globals.asGroup?.length) headers['Impersonate-Group'] = globals.asGroup;
  return { headers, cert: c.cert, key: c.key };
}

/** The error for an answer other than 101: the server's Status when it sent one. */
export function upgradeError(o: { statusCode?: number; statusMessage?: string; body: string }): unknown {
  try {
    const parsed = JSON.parse(o.body) as Status;
    if (parsed && parsed.kind === 'Status') return { status: parsed };
  } catch {
    /* not a Status */
  }
  return new CliError(
    `unable to upgrade connection: ${o.body.trim() || `${o.statusCode ?? 0} ${o.statusMessage ?? ''}`}`,
  );
}

/** Dials `path` (with its query) offering `protocols`, preferred first. */
export async function dialStream(
  session: Session,
  o: { path: string; protocols: string[]; globals: GlobalFlags; signal?: AbortSignal },
): Promise<Dialled> {
  const c = await streamAuth(session, o.globals);
  const headers = c.headers;
  const url = new URL(o.path, session.config.server);
  url.protocol = url.protocol === 'http:' ? 'ws:' : 'wss:';
  const ws = new WebSocket(url, o.protocols, {
    headers: headers as Record<string, string>,
    ca: session.config.caPem,
    cert: c.cert,
    key: c.key,
    rejectUnauthorized: !session.config.insecureSkipTlsVerify,
    perMessageDeflate: false,
    ...(session.config.tlsServerName ? { servername: session.config.tlsServerName } : {}),
  } as WebSocket.ClientOptions);
  return new Promise<Dialled>((resolve, reject) => {
    const onAbort = (): void => {
      ws.terminate();
      reject(new CliError('interrupted', 130));
    };
    o.signal?.addEventListener('abort', onAbort, { once: true });
    const done = (): void => o.signal?.removeEventListener('abort', onAbort);
    ws.once('open', () => {
      done();
      resolve({ ws, protocol: ws.protocol });
    });
    ws.once('error', (e) => {
      done();
      reject(e);
    });
    ws.once('unexpected-response', (_req, res) => {
      const chunks: Buffer[] = [];
      res.on('data', (b: Buffer) => chunks.push(b));
      res.on('end', () => {
        done();
        ws.terminate();
        const body = Buffer.concat(chunks).toString('utf8');
        reject(upgradeError({ statusCode: res.statusCode, statusMessage: res.statusMessage, body }));
      });
    });
  });
}
