import { readFileSync } from 'node:fs';

/** A process's user + system CPU time so far in ms (Linux /proc; clock ticks of 10 ms), NaN elsewhere. */
export function processCpuMs(pid: number | undefined): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return NaN;
  }
}
