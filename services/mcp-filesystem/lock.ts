/**
 * A first-come, first-served readers–writer lock for tool calls.
 *
 * Path checks and the operation that follows them are two steps; between them another call could
 * swap a checked folder for a symbolic link (move can relocate links). Running every mutating call
 * alone, and read-only calls only beside other read-only calls, closes that window for everything
 * this server does itself. Changes made by other processes on the host are outside its reach.
 */
export class ReadWriteLock {
  private readers = 0;
  private writing = false;
  private readonly waiting: Array<{ write: boolean; start: () => void }> = [];

  async run<T>(write: boolean, task: () => Promise<T>): Promise<T> {
    await this.acquire(write);
    try {
      return await task();
    } finally {
      this.release(write);
    }
  }

  private acquire(write: boolean): Promise<void> {
    if (this.waiting.length === 0 && this.canStart(write)) {
      this.start(write);
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiting.push({ write, start: resolve }));
  }

  private canStart(write: boolean): boolean {
    return write ? !this.writing && this.readers === 0 : !this.writing;
  }

  private start(write: boolean): void {
    if (write) this.writing = true;
    else this.readers += 1;
  }

  private release(write: boolean): void {
    if (write) this.writing = false;
    else this.readers -= 1;
    // In arrival order: a waiting writer holds back the readers queued after it.
    while (this.waiting.length > 0 && this.canStart(this.waiting[0]!.write)) {
      const next = this.waiting.shift()!;
      this.start(next.write);
      next.start();
    }
  }
}
