/**
 * Every YAML example in the MSM API seed parses. The seed's text is kept verbatim as a fixture
 * (testdata/msm-api-seed.org); its resource examples go through parseManifests with no errors (the
 * dialect conversions are warnings), and its fragments (spec/listener/cluster/route snippets) are
 * valid YAML that the mapping tests compare with what the engine renders.
 */
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { seedYamlBlocks } from '../../test/seedBlocks';
import { parseManifests } from './parseManifests';

const blocks = seedYamlBlocks();

describe('the MSM API seed examples', () => {
  it('has all 25 seed YAML blocks (3 in Example 1, 7 in Example 2, 11 in the mapping section, 4 in Caveats)', () => {
    expect(blocks.length).toBe(25);
  });

  it.each(blocks.map((b) => [b.line, b.text] as const))(
    'block at seed line %i is valid YAML',
    (_line, text) => {
      const docs = parseAllDocuments(text);
      const list = Array.isArray(docs) ? docs : [];
      expect(list.length).toBeGreaterThan(0);
      for (const d of list) expect(d.errors).toEqual([]);
    },
  );

  const resources = blocks.filter((b) => /^kind:/m.test(b.text));
  it('has 13 resource examples', () => {
    expect(resources.length).toBe(13);
  });

  it.each(resources.map((b) => [b.line, b.text] as const))(
    'resource example at seed line %i parses with no errors (dialect conversions are warnings)',
    (line, text) => {
      const snap = parseManifests([{ path: `seed:${line}`, content: text }]);
      expect(snap.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
      expect(snap.rejected).toEqual([]);
      const count = snap.virtualServices.length + snap.routes.length + snap.targets.length;
      expect(count).toBe((text.match(/^kind:/gm) ?? []).length);
      // "apiVersion: l7mp.io/MSM/v1 is not a valid Kubernetes group/version": each one converted and said.
      const conversions = snap.diagnostics.filter((d) => d.code === 'seed-dialect-api-version');
      expect(conversions.length).toBe(count);
    },
  );

  it("converts the seed's loose spots, each with a warning that points at the line", () => {
    const all = resources.map((b) => parseManifests([{ path: `seed:${b.line}`, content: b.text }]));
    const codes = all.flatMap((s) => s.diagnostics.map((d) => d.code));
    expect(codes).toContain('seed-dialect-metadata-selector');
    expect(codes).toContain('seed-dialect-rules-object'); // Example 1's transcoder-vsvc
    const ports = all.flatMap((s) => s.diagnostics.filter((d) => d.code === 'seed-dialect-port-string'));
    expect(ports.map((d) => d.message)).toEqual([
      'port is the string "8001," (a trailing comma in YAML); read as 8001',
      'port is the string "8002," (a trailing comma in YAML); read as 8002',
    ]);
    const userA = all
      .flatMap((s) => s.virtualServices)
      .find((v) => v.metadata.name === 'gateway-user-a-vsvc');
    expect(userA?.spec.udp).toEqual({ port: 8001, connect: { address: '192.168.0.1', port: 8001 } });
    const transcoder = all
      .flatMap((s) => s.virtualServices)
      .find((v) => v.metadata.name === 'transcoder-vsvc');
    expect(Array.isArray(transcoder?.spec.rules)).toBe(true);
    expect(transcoder?.spec.selector).toEqual({ matchLabels: { app: 'transcoder' } });
  });
});
