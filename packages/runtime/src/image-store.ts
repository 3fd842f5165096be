import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { readJson, writeJson } from './json-files.js';
import type { Image } from './cri-types.js';

/** An image as svc-runtime knows it: a name that was pulled. Nothing is downloaded. */
export interface ImageRecord {
  /** `sha256:<hex of the normalized name>`; also the image_ref PullImage answers. */
  id: string;
  name: string;
  pulledAt: number;
}

/** The size reported for every image (the CRI wants > 0; images take no space here). */
const IMAGE_SIZE = 1;

/**
 * `busybox` and `busybox:latest` name one image: a reference without tag or digest gets
 * `:latest`. (Kubernetes runtimes also add `docker.io/library/`; we don't.)
 */
export function normalizeImageName(name: string): string {
  const last = name.slice(name.lastIndexOf('/') + 1);
  return name.includes('@') || last.includes(':') ? name : `${name}:latest`;
}

export function imageId(name: string): string {
  return `sha256:${createHash('sha256').update(normalizeImageName(name)).digest('hex')}`;
}

export function toCriImage(r: ImageRecord): Image {
  const digest = r.name.includes('@');
  return {
    id: r.id,
    repoTags: digest ? [] : [r.name],
    repoDigests: digest ? [r.name] : [],
    size: IMAGE_SIZE,
    // Images here have no user of their own: their containers run as svc-runtime itself unless
    // the pod names a user, so that is the user kubelet's runAsNonRoot check must see.
    uid: { value: process.getuid?.() ?? 0 },
    username: '',
    spec: { image: r.id, annotations: {}, userSpecifiedImage: '', runtimeHandler: '', imageRef: r.id },
    pinned: false,
  };
}

/** The pulled images, persisted in `<rootDir>/images.json` on every change. */
export class ImageStore {
  private readonly file: string;
  private readonly images: Map<string, ImageRecord>;

  constructor(rootDir: string) {
    this.file = join(rootDir, 'images.json');
    this.images = new Map((readJson<ImageRecord[]>(this.file) ?? []).map((r) => [r.id, r]));
  }

  /** Records `name` (any name succeeds) and returns its id. */
  pull(name: string): ImageRecord {
    const id = imageId(name);
    let r = this.images.get(id);
    if (!r) {
      r = { id, name: normalizeImageName(name), pulledAt: Date.now() };
      this.images.set(id, r);
      this.save();
    }
    return r;
  }

  /** The image named `ref` (a name, or an id as PullImage returned it). */
  find(ref: string): ImageRecord | undefined {
    return this.images.get(ref) ?? this.images.get(imageId(ref));
  }

  list(): ImageRecord[] {
    return [...this.images.values()];
  }

  /** Idempotent. */
  remove(ref: string): void {
    const r = this.find(ref);
    if (r && this.images.delete(r.id)) this.save();
  }

  private save(): void {
    writeJson(this.file, this.list());
  }
}
