import type { IntOrString, Quantity, ResourceList } from './meta.js';
import type { SecurityContext, VolumeMount } from './security.js';

/** core/v1 Container and its parts. */

export interface HTTPHeader {
  name: string;
  value: string;
}

export interface HTTPGetAction {
  path?: string;
  port: IntOrString;
  host?: string;
  /** `HTTP` when empty. */
  scheme?: string;
  httpHeaders?: HTTPHeader[];
}

/** A probe's action; exactly one is set. */
export interface ProbeHandler {
  exec?: { command?: string[] };
  httpGet?: HTTPGetAction;
  tcpSocket?: { port: IntOrString; host?: string };
  grpc?: { port: number; service?: string };
}

/** A postStart or preStop hook's action; exactly one is set. */
export interface LifecycleHandler {
  exec?: { command?: string[] };
  httpGet?: HTTPGetAction;
  tcpSocket?: { port: IntOrString; host?: string };
  sleep?: { seconds: number };
}

export interface Probe extends ProbeHandler {
  initialDelaySeconds?: number;
  timeoutSeconds?: number;
  periodSeconds?: number;
  successThreshold?: number;
  failureThreshold?: number;
  terminationGracePeriodSeconds?: number;
}

/** ConfigMapKeySelector and SecretKeySelector. */
export interface KeySelector {
  name?: string;
  key: string;
  optional?: boolean;
}

export interface ObjectFieldSelector {
  apiVersion?: string;
  fieldPath: string;
}

export interface ResourceFieldSelector {
  containerName?: string;
  resource: string;
  divisor?: Quantity;
}

export interface EnvVarSource {
  fieldRef?: ObjectFieldSelector;
  resourceFieldRef?: ResourceFieldSelector;
  configMapKeyRef?: KeySelector;
  secretKeyRef?: KeySelector;
}

export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: EnvVarSource;
}

export interface EnvFromSource {
  prefix?: string;
  configMapRef?: { name?: string; optional?: boolean };
  secretRef?: { name?: string; optional?: boolean };
}

export interface ContainerPort {
  name?: string;
  containerPort: number;
  hostPort?: number;
  protocol?: 'TCP' | 'UDP' | 'SCTP';
  hostIP?: string;
}

export interface ResourceRequirements {
  limits?: ResourceList;
  requests?: ResourceList;
}

export type PullPolicy = 'Always' | 'Never' | 'IfNotPresent';

export interface Container {
  name: string;
  image?: string;
  command?: string[];
  args?: string[];
  workingDir?: string;
  ports?: ContainerPort[];
  envFrom?: EnvFromSource[];
  env?: EnvVar[];
  resources?: ResourceRequirements;
  /** `Always` on an init container makes it a sidecar. */
  restartPolicy?: string;
  livenessProbe?: Probe;
  readinessProbe?: Probe;
  startupProbe?: Probe;
  lifecycle?: { postStart?: LifecycleHandler; preStop?: LifecycleHandler };
  terminationMessagePath?: string;
  terminationMessagePolicy?: string;
  imagePullPolicy?: PullPolicy;
  volumeMounts?: VolumeMount[];
  securityContext?: SecurityContext;
  stdin?: boolean;
  stdinOnce?: boolean;
  tty?: boolean;
}

/** A debugging container added through `pods/ephemeralcontainers`. */
export interface EphemeralContainer extends Container {
  targetContainerName?: string;
}
