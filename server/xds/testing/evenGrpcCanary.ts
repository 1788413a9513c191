import { readFile, writeFile } from 'node:fs/promises';

/**
 * Edits a copy of examples/grpc-canary's mesh.yaml from its 80/20 split to 50/50, as a user would;
 * throws when the file no longer holds the split (the example changed under the tests).
 */
export async function evenGrpcCanarySplit(meshFile: string): Promise<void> {
  const text = await readFile(meshFile, 'utf8');
  const edited = text
    .replace('{ serviceName: echo-v1, weight: 80 }', '{ serviceName: echo-v1, weight: 50 }')
    .replace('{ serviceName: echo-v2, weight: 20 }', '{ serviceName: echo-v2, weight: 50 }');
  if (edited === text) throw new Error(`${meshFile} has no 80/20 split of echo-v1 and echo-v2 to edit`);
  await writeFile(meshFile, edited);
}
