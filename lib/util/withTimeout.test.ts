import { describe, expect, it } from 'vitest';
import { withTimeout } from './withTimeout';

describe('withTimeout', () => {
  it("passes the promise's value or error through when it settles first", async () => {
    await expect(withTimeout(Promise.resolve(7), 1000, 'x')).resolves.toBe(7);
    await expect(withTimeout(Promise.reject(new Error('refused')), 1000, 'x')).rejects.toThrow('refused');
  });

  it('rejects, naming what got no answer, when the promise never settles', async () => {
    await expect(withTimeout(new Promise<never>(() => {}), 10, 'writing the status')).rejects.toThrow(
      'writing the status: no answer within 10 ms',
    );
  });
});
