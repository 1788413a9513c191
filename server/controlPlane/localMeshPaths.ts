import os from 'node:os';
import path from 'node:path';

/**
 * Where the local mesh keeps its state (bootstrap configs, pod folders with UNIX sockets):
 * MESHDECK_STATE_DIR, else `<tmp>/meshdeck`. Short on purpose: socket paths are limited to 107 bytes.
 */
export function localMeshStateDir(): string {
  return process.env.MESHDECK_STATE_DIR ?? path.join(os.tmpdir(), 'meshdeck');
}

/** The folder under which each local-mesh pod's files live (`<podsDir>/<namespace>/<pod>/...`). */
export function localMeshPodsDir(stateDir = localMeshStateDir()): string {
  return path.join(stateDir, 'pods');
}
