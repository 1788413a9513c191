import { describe, expect, it } from 'vitest';
import { urlHost } from './urlHost';

describe('urlHost', () => {
  it('brackets IPv6 addresses and leaves names and IPv4 addresses alone', () => {
    expect(urlHost('::1')).toBe('[::1]');
    expect(urlHost('fd00::7')).toBe('[fd00::7]');
    expect(urlHost('127.0.0.1')).toBe('127.0.0.1');
    expect(urlHost('localhost')).toBe('localhost');
  });
});
