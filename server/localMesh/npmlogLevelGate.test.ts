/**
 * gateNpmlog against the very npmlog that l7mp 0.5.7 loads (a fresh instance per test).
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import type { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';

const require = createRequire(import.meta.url);
const { gateNpmlog } = require('./npmlogLevelGate.cjs') as { gateNpmlog: (log: Npmlog) => void };
const l7mpDir = path.dirname(require.resolve('@l7mp/l7mp/package.json'));
const npmlogPath = require.resolve('npmlog', { paths: [l7mpDir] });

interface Npmlog extends EventEmitter {
  level: string;
  record: { level: string; message: string }[];
  stream: NodeJS.WritableStream;
  log(level: string, prefix: string, ...args: unknown[]): void;
  silly(prefix: string, ...args: unknown[]): void;
  info(prefix: string, ...args: unknown[]): void;
  warn(prefix: string, ...args: unknown[]): void;
  error(prefix: string, ...args: unknown[]): void;
}

/** A new npmlog instance writing to a buffer, and what it printed so far. */
function freshNpmlog(level: string, gated: boolean): { log: Npmlog; printed: () => string } {
  delete require.cache[npmlogPath];
  const log = require(npmlogPath) as Npmlog;
  delete require.cache[npmlogPath];
  const out = new PassThrough();
  let text = '';
  out.on('data', (chunk: Buffer) => (text += chunk.toString()));
  log.stream = out;
  log.level = level;
  if (gated) gateNpmlog(log);
  return { log, printed: () => text };
}

describe('gateNpmlog', () => {
  it('npmlog itself records a line below its level (what the gate is for)', () => {
    const { log, printed } = freshNpmlog('warn', false);
    log.silly('Session.create', 'quiet %s', 'line');
    expect(log.record.map((m) => m.message)).toEqual(['quiet line']);
    expect(printed()).toBe('');
  });

  it('drops lines below the level, and prints and records the rest as before', () => {
    const { log, printed } = freshNpmlog('warn', true);
    log.silly('Session.create', 'quiet');
    log.info('L7mp.addEndPoint', 'quiet too');
    log.warn('Cluster', 'loud %d', 1);
    expect(log.record.map((m) => `${m.level} ${m.message}`)).toEqual(['warn loud 1']);
    expect(printed()).toContain('Cluster loud 1');
    expect(printed()).not.toContain('quiet');
  });

  it('follows a level changed later', () => {
    const { log } = freshNpmlog('warn', true);
    log.info('p', 'before');
    log.level = 'silly';
    log.info('p', 'after');
    expect(log.record.map((m) => m.message)).toEqual(['after']);
  });

  it('lets a line below the level through when someone listens for it', () => {
    const { log } = freshNpmlog('warn', true);
    const heard: string[] = [];
    log.on('log.info', (m: { message: string }) => heard.push(`level ${m.message}`));
    log.info('p', 'one');
    log.removeAllListeners('log.info');
    log.on('log', (m: { message: string }) => heard.push(`any ${m.message}`));
    log.silly('p', 'two');
    log.removeAllListeners('log');
    log.on('Session', (m: { message: string }) => heard.push(`prefix ${m.message}`));
    log.silly('Session', 'three');
    log.silly('Other', 'four');
    expect(heard).toEqual(['level one', 'any two', 'prefix three']);
  });

  it("keeps l7mp-proxy.js's error handler working even at level silent", () => {
    const { log } = freshNpmlog('silent', true);
    const errors: string[] = [];
    log.on('log.error', (m: { message: string }) => errors.push(m.message));
    log.error('L7mp.run', 'fatal');
    expect(errors).toEqual(['fatal']);
  });
});
