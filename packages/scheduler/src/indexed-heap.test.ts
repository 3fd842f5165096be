import { IndexedHeap } from './indexed-heap.js';

interface Item {
  v: number;
  heapIndex: number;
}

describe('IndexedHeap', () => {
  it('pops in order after pushes and removals anywhere, as a sorted list would', () => {
    // A fixed pseudo-random sequence (a linear congruential generator), so a failure repeats.
    let seed = 7;
    const rand = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const heap = new IndexedHeap<Item>((a, b) => a.v < b.v);
    const inHeap: Item[] = [];
    for (let step = 0; step < 5000; step++) {
      const op = rand(3);
      if (op < 2 || inHeap.length === 0) {
        const item = { v: rand(1000), heapIndex: -1 };
        heap.push(item);
        inHeap.push(item);
      } else {
        const [item] = inHeap.splice(rand(inHeap.length), 1);
        if (!item) throw new Error('no item');
        heap.remove(item);
        expect(heap.has(item)).toBe(false);
        expect(item.heapIndex).toBe(-1);
      }
      expect(heap.size).toBe(inHeap.length);
    }
    const expected = inHeap.map((i) => i.v).sort((a, b) => a - b);
    const popped: number[] = [];
    for (let i = heap.pop(); i; i = heap.pop()) popped.push(i.v);
    expect(popped).toEqual(expected);
    expect(heap.size).toBe(0);
  });

  it('ignores the removal of an item it does not hold', () => {
    const heap = new IndexedHeap<Item>((a, b) => a.v < b.v);
    const a = { v: 1, heapIndex: -1 };
    const stranger = { v: 0, heapIndex: 0 };
    heap.push(a);
    heap.remove(stranger);
    expect(heap.size).toBe(1);
    expect(heap.peek()).toBe(a);
  });
});
