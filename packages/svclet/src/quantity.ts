// Resource quantities (Kubernetes' resource.Quantity) as plain numbers: enough for capacity,
// reservations and eviction thresholds. Precision beyond a double is not kept.

const BINARY: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60 };
const DECIMAL: Record<string, number> = {
  n: 1e-9,
  u: 1e-6,
  m: 1e-3,
  '': 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
};
const QUANTITY = /^([+-]?(?:\d+\.?\d*|\.\d+))(?:(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)|[eE]([+-]?\d+))?$/;

/** The value of a quantity (`100Mi` → 104857600, `200m` → 0.2); throws for anything else. */
export function parseQuantity(s: string): number {
  const m = QUANTITY.exec(s.trim());
  if (!m)
    throw new Error(
      `quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$': ${JSON.stringify(s)}`,
    );
  const n = Number(m[1]);
  if (m[3] !== undefined) return n * 10 ** Number(m[3]);
  const suffix = m[2] ?? '';
  return n * (BINARY[suffix] ?? DECIMAL[suffix] ?? 1);
}

/** Bytes as Kubernetes prints node memory and storage: whole `Ki` (rounded down). */
export function formatKi(bytes: number): string {
  return `${Math.max(0, Math.floor(bytes / 1024))}Ki`;
}

/** CPU cores: whole cores as an integer, else millicores (`1500m`). */
export function formatCpu(cores: number): string {
  const milli = Math.max(0, Math.round(cores * 1000));
  return milli % 1000 === 0 ? String(milli / 1000) : `${milli}m`;
}
