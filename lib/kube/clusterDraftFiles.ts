/**
 * What a cluster holds, as the files of a console draft (Kubernetes mode): per namespace, `mesh.yaml`
 * with its VirtualServices, Routes and Targets (what the console edits and applies), and `cluster.yaml`
 * with its Services, Pods and EndpointSlices (what the engine reads besides; the console does not apply
 * them). The same layout as the shipped examples, so a draft of a cluster reads like a mesh directory.
 * Pure and deterministic: the same objects in any order give the same text.
 */
import { stringify } from 'yaml';
import { type KubeObjects, type KubeSourceKind, type LeanKubeObject, MESH_CRD_KINDS } from './kubeSnapshot';

const CLUSTER_KINDS = ['Service', 'Pod', 'EndpointSlice'] as const satisfies readonly KubeSourceKind[];

/** Each namespace's file of Services, Pods and EndpointSlices (what the console never applies). */
export const CLUSTER_FILE = 'cluster.yaml';

/** Each namespace's file of mesh resources (a rollout reads its Target's split there alone). */
export const MESH_FILE = 'mesh.yaml';

/** The header of each namespace's `cluster.yaml`: why editing it does not change the cluster. */
export const CLUSTER_FILE_HEADER =
  '# Read from the cluster: Services, Pods and EndpointSlices, as the engine sees them. The console\n' +
  '# applies VirtualServices, Routes and Targets only: edits here change the preview, not the cluster.\n';

/** The header of each namespace's `mesh.yaml`. */
export const MESH_FILE_HEADER =
  '# Read from the cluster: the mesh resources (msm.l7mp.io/v1) of this namespace, without status.\n';

/** The draft files (`<namespace>/mesh.yaml`, `<namespace>/cluster.yaml`) of a cluster's lean objects. */
export function clusterDraftFiles(objects: Partial<KubeObjects>): Record<string, string> {
  const byNs = new Map<string, { mesh: string[]; cluster: string[] }>();
  const add = (kinds: readonly KubeSourceKind[], part: 'mesh' | 'cluster') => {
    for (const kind of kinds) {
      const list = [...(objects[kind] ?? [])].sort((a, b) =>
        a.metadata.namespace === b.metadata.namespace
          ? compare(a.metadata.name, b.metadata.name)
          : compare(a.metadata.namespace, b.metadata.namespace),
      );
      for (const o of list) {
        const ns = o.metadata.namespace;
        let entry = byNs.get(ns);
        if (!entry) byNs.set(ns, (entry = { mesh: [], cluster: [] }));
        entry[part].push(yamlOf(o));
      }
    }
  };
  add(MESH_CRD_KINDS, 'mesh');
  add(CLUSTER_KINDS, 'cluster');
  const files: Record<string, string> = {};
  for (const ns of [...byNs.keys()].sort(compare)) {
    const { mesh, cluster } = byNs.get(ns)!;
    if (mesh.length > 0) files[`${ns}/${MESH_FILE}`] = MESH_FILE_HEADER + mesh.join('---\n');
    if (cluster.length > 0) files[`${ns}/${CLUSTER_FILE}`] = CLUSTER_FILE_HEADER + cluster.join('---\n');
  }
  return files;
}

/**
 * Each object's YAML, by lean object: a source keeps the same lean object while it is unchanged and
 * never mutates it, so the files of a large cluster are rewritten after a change without stringifying
 * every object again. Weak: dropped objects are collected.
 */
const yamlCache = new WeakMap<LeanKubeObject, string>();

function yamlOf(o: LeanKubeObject): string {
  let text = yamlCache.get(o);
  if (text === undefined) yamlCache.set(o, (text = stringify(withoutGeneration(o), { lineWidth: 0 })));
  return text;
}

/** `generation` is the server's bookkeeping: applying it back is refused, and it is noise in a diff. */
function withoutGeneration(o: { metadata: Record<string, unknown> }): Record<string, unknown> {
  const { generation: _generation, ...metadata } = o.metadata;
  return { ...o, metadata };
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
