/**
 * imagepolicy/v1alpha1 ImageReview: what the ImagePolicyWebhook admission plugin sends to its
 * backend about a pod's images, and the backend's answer. Never served; only sent.
 */

export interface ImageReviewContainerSpec {
  image?: string;
}

export interface ImageReviewSpec {
  containers?: ImageReviewContainerSpec[];
  /** The pod's annotations whose keys contain `.image-policy.<suffix>/`. */
  annotations?: Record<string, string>;
  namespace?: string;
}

export interface ImageReviewStatus {
  allowed: boolean;
  reason?: string;
  /** Added to the request's audit annotations under the plugin's prefix. */
  auditAnnotations?: Record<string, string>;
}

export interface ImageReview {
  apiVersion: string;
  kind: 'ImageReview';
  metadata?: { creationTimestamp?: null };
  spec: ImageReviewSpec;
  status?: ImageReviewStatus;
}
