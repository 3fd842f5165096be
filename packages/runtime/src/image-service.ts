import { invalidArgument } from './cri-proto.js';
import { nowNs } from './json-files.js';
import { toCriImage, type ImageStore } from './image-store.js';
import type {
  Empty,
  ImageFsInfoResponse,
  ImageStatusRequest,
  ImageStatusResponse,
  ListImagesRequest,
  ListImagesResponse,
  PullImageRequest,
  PullImageResponse,
  RemoveImageRequest,
} from './cri-types.js';

/**
 * The CRI ImageService over recorded names: PullImage succeeds for any name and fetches
 * nothing; the image ref it answers (`sha256:<hash of the name>`) is also the image's id
 * everywhere else (Image.id, Container.image_ref/image_id), as the CRI requires.
 */
export class RecordedImageService {
  constructor(
    private readonly store: ImageStore,
    private readonly rootDir: string,
  ) {}

  async listImages(req: ListImagesRequest): Promise<ListImagesResponse> {
    const want = req.filter?.image?.image;
    const images = want ? [this.store.find(want)].filter((r) => r !== undefined) : this.store.list();
    return { images: images.map(toCriImage) };
  }

  async imageStatus(req: ImageStatusRequest): Promise<ImageStatusResponse> {
    const r = this.store.find(requiredName(req.image?.image));
    return { image: r ? toCriImage(r) : null, info: r && req.verbose ? { info: JSON.stringify(r) } : {} };
  }

  async pullImage(req: PullImageRequest): Promise<PullImageResponse> {
    return { imageRef: this.store.pull(requiredName(req.image?.image)).id };
  }

  async removeImage(req: RemoveImageRequest): Promise<Empty> {
    this.store.remove(requiredName(req.image?.image));
    return {};
  }

  async imageFsInfo(_req: Empty): Promise<ImageFsInfoResponse> {
    // Recorded images take no space.
    const usage = {
      timestamp: nowNs(),
      fsId: { mountpoint: this.rootDir },
      usedBytes: { value: 0 },
      inodesUsed: { value: 0 },
    };
    return { imageFilesystems: [usage], containerFilesystems: [] };
  }
}

function requiredName(name: string | undefined): string {
  if (!name) throw invalidArgument('image.image (the image name or id) is required');
  return name;
}
