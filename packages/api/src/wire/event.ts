import type { ApiObject } from '../types.js';
import type { ObjectReference } from './meta.js';

/** core/v1 Event (what EventRecorder writes). */

export interface EventSource {
  component?: string;
  host?: string;
}

export interface Event extends ApiObject {
  involvedObject: ObjectReference;
  reason?: string;
  message?: string;
  source?: EventSource;
  firstTimestamp?: string;
  lastTimestamp?: string;
  count?: number;
  type?: 'Normal' | 'Warning';
  /** MicroTime; set with `action` by recorders that name a reporting instance. */
  eventTime?: string;
  series?: { count?: number; lastObservedTime?: string };
  action?: string;
  related?: ObjectReference;
  reportingComponent?: string;
  reportingInstance?: string;
}
