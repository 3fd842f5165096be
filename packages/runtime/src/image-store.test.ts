import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ImageStore, imageId, normalizeImageName, toCriImage } from './image-store.js';

describe('image names', () => {
  it('gives a reference without tag or digest the tag latest', () => {
    expect(normalizeImageName('busybox')).toBe('busybox:latest');
    expect(normalizeImageName('busybox:1.36')).toBe('busybox:1.36');
    expect(normalizeImageName('registry:5000/team/app')).toBe('registry:5000/team/app:latest');
    expect(normalizeImageName('app@sha256:abc')).toBe('app@sha256:abc');
  });

  it('derives a stable sha256 id from the normalized name', () => {
    expect(imageId('busybox')).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(imageId('busybox')).toBe(imageId('busybox:latest'));
    expect(imageId('busybox')).not.toBe(imageId('busybox:1.36'));
  });
});

describe('ImageStore', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'svc-images-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('records pulls, finds by name or id, removes idempotently and persists', () => {
    const store = new ImageStore(dir);
    const r = store.pull('busybox');
    expect(store.pull('busybox:latest').id).toBe(r.id);
    expect(store.find('busybox')?.id).toBe(r.id);
    expect(store.find(r.id)?.name).toBe('busybox:latest');
    store.pull('app@sha256:abc');
    expect(
      new ImageStore(dir)
        .list()
        .map((i) => i.name)
        .sort(),
    ).toEqual(['app@sha256:abc', 'busybox:latest']);
    store.remove(r.id);
    store.remove('busybox');
    expect(new ImageStore(dir).find('busybox')).toBeUndefined();
  });

  it('reports tags and digests as the CRI Image message', () => {
    const store = new ImageStore(dir);
    expect(toCriImage(store.pull('nginx:1.27'))).toMatchObject({ repoTags: ['nginx:1.27'], repoDigests: [], size: 1 });
    expect(toCriImage(store.pull('app@sha256:abc'))).toMatchObject({ repoTags: [], repoDigests: ['app@sha256:abc'] });
  });
});
