export { runSvcadm, svcadmCommand, type SvcadmIo } from './svcadm.js';
export {
  discoverCluster,
  verifyDetachedJws,
  DiscoveryError,
  type DiscoveryOptions,
  type DiscoveredCluster,
} from './discovery.js';
export { PublicKeyPins, publicKeyPin, subjectPublicKeyInfo, certificatesOfPem } from './pubkey-pin.js';
export {
  generateToken,
  parseToken,
  tokenSecret,
  tokenFromSecret,
  defaultNodeTokenGroup,
  type BootstrapToken,
} from './token.js';
export { clusterInfoKubeconfig, bootstrapSvcconfig, joinObjects } from './cluster-info.js';
export { startLoadBalancer, parseLoadBalancerArgs, type LoadBalancer, type LoadBalancerOptions } from './lb.js';
