import { AsyncLocalStorage } from 'node:async_hooks';

/** What authenticators add to the request they authenticate: `Warning` headers and audit annotations. */
export interface AuthenticationNotes {
  warnings: string[];
  auditAnnotations: Record<string, string>;
}

const current = new AsyncLocalStorage<AuthenticationNotes>();

/**
 * Runs `authenticate` with a fresh set of notes that authenticators fill through
 * `addAuthenticationWarning` / `addAuthenticationAuditAnnotation` (Kubernetes adds them to the
 * request's context). The notes are handed to `done` whether `authenticate` resolves or throws.
 */
export async function withAuthenticationNotes<T>(
  authenticate: () => Promise<T>,
  done: (notes: AuthenticationNotes) => void,
): Promise<T> {
  const notes: AuthenticationNotes = { warnings: [], auditAnnotations: {} };
  try {
    return await current.run(notes, authenticate);
  } finally {
    done(notes);
  }
}

/** A warning for the client of the request being authenticated; dropped outside a request (TokenReview). */
export function addAuthenticationWarning(text: string): void {
  current.getStore()?.warnings.push(text);
}

/** An audit annotation of the request being authenticated; the first value of a key stays. */
export function addAuthenticationAuditAnnotation(key: string, value: string): void {
  const notes = current.getStore();
  if (notes && notes.auditAnnotations[key] === undefined) notes.auditAnnotations[key] = value;
}
