import { readFileSync } from 'node:fs';
import { timingSafeEqual, createHash } from 'node:crypto';
import type { AudienceAgnosticTokenAuthenticator, UserInfo } from '@svc/component-base';

/** Parses one CSV line with double-quoted fields (`token,user,uid,"g1,g2"`). */
function csvFields(line: string): string[] {
  const out: string[] = [];
  let cur = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quoted) {
      if (c === '"' && line[i + 1] === '"') {
        cur += '"';
        i++;
      } else if (c === '"') quoted = false;
      else cur += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      out.push(cur);
      cur = '';
    } else cur += c;
  }
  if (quoted) throw new Error('unterminated quoted field');
  out.push(cur);
  return out.map((f) => f.trim());
}

/** Parses a static token file: at least token, user name, uid; further columns (or one quoted column) are groups. */
export function parseTokenFile(text: string, file = 'token file'): Map<string, UserInfo> {
  const tokens = new Map<string, UserInfo>();
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    let f: string[];
    try {
      f = csvFields(line);
    } catch (e) {
      throw new Error(`${file}, line ${i + 1}: ${(e as Error).message}`, { cause: e });
    }
    if (f.length < 3)
      throw new Error(`${file}, line ${i + 1}: needs at least 3 columns (token, user name, uid), found ${f.length}`);
    const [token = '', name = '', uid = ''] = f;
    if (!token) throw new Error(`${file}, line ${i + 1}: empty token`);
    if (tokens.has(token)) throw new Error(`${file}, line ${i + 1}: duplicate token`);
    const groups = f
      .slice(3)
      .flatMap((g) => g.split(','))
      .map((g) => g.trim())
      .filter((g) => g !== '');
    tokens.set(token, { name, uid, groups });
  });
  return tokens;
}

function digest(s: string): Buffer {
  return createHash('sha256').update(s).digest();
}

/** `--token-auth-file`: tokens read once at start; compared in constant time. */
export class TokenFileAuthenticator implements AudienceAgnosticTokenAuthenticator {
  private readonly entries: Array<{ digest: Buffer; user: UserInfo }>;

  constructor(tokens: Map<string, UserInfo>) {
    this.entries = [...tokens].map(([t, user]) => ({ digest: digest(t), user }));
  }

  static fromFile(path: string): TokenFileAuthenticator {
    return new TokenFileAuthenticator(parseTokenFile(readFileSync(path, 'utf8'), path));
  }

  async authenticateToken(token: string): Promise<UserInfo | null> {
    const d = digest(token);
    let found: UserInfo | undefined;
    for (const e of this.entries) if (timingSafeEqual(e.digest, d)) found = e.user;
    if (!found) return null;
    return { ...found, groups: [...found.groups] };
  }
}
