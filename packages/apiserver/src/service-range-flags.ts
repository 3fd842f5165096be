import { isIP } from 'node:net';
import { Option, type Command } from 'commander';

/** The Service address and port ranges (Kubernetes' `--service-cluster-ip-range`, `--service-node-port-range`). */
export interface ServiceRangeFlags {
  /** One CIDR (Kubernetes' default 10.0.0.0/24 when the flag is not given). */
  serviceClusterIpRange: string;
  /** Inclusive NodePort range, 30000-32767 by default. */
  serviceNodePortRange: { min: number; max: number };
}

/** Kubernetes' DefaultServiceIPCIDR. */
export const DEFAULT_SERVICE_CLUSTER_IP_RANGE = '10.0.0.0/24';

export function withServiceRangeFlags(cmd: Command): Command {
  return cmd
    .addOption(
      new Option(
        '--service-cluster-ip-range <cidr>',
        'A CIDR notation IP range from which to assign service cluster IPs. This must not overlap with any IP ranges assigned to nodes or pods. Max of two dual-stack CIDRs is allowed (one is supported here). Not given: 10.0.0.0/24.',
      ),
    )
    .addOption(
      new Option(
        '--service-node-port-range <range>',
        "A port range to reserve for services with NodePort visibility. This must not overlap with the ephemeral port range on nodes. Example: '30000-32767'. Inclusive at both ends of the range.",
      ).default('30000-32767'),
    );
}

/** True when `cidr` is `<ip>/<prefix>` with a prefix the address family allows. */
function isCidr(cidr: string): boolean {
  const [ip, bits, ...rest] = cidr.split('/');
  const family = isIP(ip ?? '');
  if (rest.length > 0 || family === 0 || !/^\d{1,3}$/.test(bits ?? '')) return false;
  return Number(bits) <= (family === 4 ? 32 : 128);
}

/** The flags above, checked (`fail` exits 2 with one line). */
export function serviceRangeFlags(o: Record<string, unknown>, c: { fail: (msg: string) => never }): ServiceRangeFlags {
  const cidr = (o.serviceClusterIpRange as string | undefined) ?? DEFAULT_SERVICE_CLUSTER_IP_RANGE;
  if (cidr.includes(',')) c.fail(`--service-cluster-ip-range: ${cidr}: only one CIDR is supported`);
  if (!isCidr(cidr))
    c.fail(
      `invalid argument ${JSON.stringify(cidr)} for "--service-cluster-ip-range" flag: invalid CIDR address: ${cidr}`,
    );
  const [ip, bits] = cidr.split('/') as [string, string];
  const hostBits = (isIP(ip) === 4 ? 32 : 128) - Number(bits);
  if (hostBits < 2)
    c.fail(`--service-cluster-ip-range: ${cidr}: the range must hold at least 2 addresses besides the network address`);
  if (isIP(ip) === 6 && hostBits > 64)
    c.fail(`--service-cluster-ip-range: ${cidr}: an IPv6 range may not be larger than /64`);
  const text = String(o.serviceNodePortRange);
  const m = /^(\d+)(?:[-+](\d+))?$/.exec(text);
  const min = m ? Number(m[1]) : NaN;
  const max = m ? (m[2] === undefined ? min : text.includes('+') ? min + Number(m[2]) : Number(m[2])) : NaN;
  if (!m || min < 1 || max > 65535 || max < min)
    c.fail(
      `invalid argument ${JSON.stringify(text)} for "--service-node-port-range" flag: unable to parse port range: ${text}`,
    );
  return { serviceClusterIpRange: cidr, serviceNodePortRange: { min, max } };
}
