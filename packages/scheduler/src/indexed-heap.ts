/** An item of an `IndexedHeap`: the heap keeps its position there (-1 when it is in none). */
export interface HeapItem {
  heapIndex: number;
}

/**
 * A binary min-heap under `less` whose items know their position, so that one can be removed
 * in O(log n) (Kubernetes' scheduler keeps its active and back-off queues in such heaps).
 */
export class IndexedHeap<T extends HeapItem> {
  private readonly items: T[] = [];

  constructor(private readonly less: (a: T, b: T) => boolean) {}

  get size(): number {
    return this.items.length;
  }

  peek(): T | undefined {
    return this.items[0];
  }

  push(item: T): void {
    item.heapIndex = this.items.length;
    this.items.push(item);
    this.up(item.heapIndex);
  }

  pop(): T | undefined {
    const top = this.items[0];
    if (top) this.remove(top);
    return top;
  }

  /** Takes `item` out if it is in this heap. */
  remove(item: T): void {
    const i = item.heapIndex;
    if (i < 0 || this.items[i] !== item) return;
    const last = this.items.pop() as T;
    item.heapIndex = -1;
    if (last === item) return;
    this.items[i] = last;
    last.heapIndex = i;
    this.down(i);
    this.up(last.heapIndex);
  }

  has(item: T): boolean {
    return item.heapIndex >= 0 && this.items[item.heapIndex] === item;
  }

  values(): readonly T[] {
    return this.items;
  }

  private up(i: number): void {
    const items = this.items;
    const item = items[i] as T;
    while (i > 0) {
      const p = (i - 1) >> 1;
      const parent = items[p] as T;
      if (!this.less(item, parent)) break;
      items[i] = parent;
      parent.heapIndex = i;
      i = p;
    }
    items[i] = item;
    item.heapIndex = i;
  }

  private down(i: number): void {
    const items = this.items;
    const n = items.length;
    const item = items[i] as T;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const r = l + 1;
      const c = r < n && this.less(items[r] as T, items[l] as T) ? r : l;
      const child = items[c] as T;
      if (!this.less(child, item)) break;
      items[i] = child;
      child.heapIndex = i;
      i = c;
    }
    items[i] = item;
    item.heapIndex = i;
  }
}
