// The erasures an eraser made lately, by name (key-eraser.ts): what the fold asks for again is
// not written twice.

/** The newest `capacity` names added, oldest pushed out first. */
export class RecentNames {
  private readonly names = new Set<string>();
  // Overwritten in turn: a Set evicting its first entry walks past every entry deleted before it
  // (V8 keeps them until the table is rebuilt), thousands of steps an erasure at this size.
  private readonly order: (string | undefined)[];
  private next = 0;

  constructor(private readonly capacity: number) {
    this.order = new Array<string | undefined>(capacity).fill(undefined);
  }

  has(name: string): boolean {
    return this.names.has(name);
  }

  add(name: string): void {
    if (this.names.has(name)) return;
    const evicted = this.order[this.next];
    if (evicted !== undefined) this.names.delete(evicted);
    this.order[this.next] = name;
    this.next = (this.next + 1) % this.capacity;
    this.names.add(name);
  }
}
