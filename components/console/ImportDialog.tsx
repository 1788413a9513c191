'use client';

import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import type { CommandResult, DraftCommand } from '@/lib/console/draftCommands';
import type { DraftDoc } from '@/lib/console/draftDoc';
import { importFileName } from '@/lib/console/exportDraft';
import { errorMessage } from './api';
import { Dialog } from './Dialog';
import { examplesQuery } from './queries';

/** Paste or open YAML (the seed's l7mp.io/MSM/v1 dialect included), or load a shipped example. */
export function ImportDialog({
  open,
  draft,
  run,
  onClose,
}: {
  open: boolean;
  draft: DraftDoc;
  run(cmd: DraftCommand): CommandResult;
  onClose(): void;
}) {
  const [text, setText] = useState('');
  const [name, setName] = useState('imported.yaml');
  const [error, setError] = useState<string | undefined>();
  const examples = useQuery({ ...examplesQuery, enabled: open });
  const done = (r: CommandResult) => {
    if (!r.ok) setError(r.error);
    else {
      setError(undefined);
      setText('');
      onClose();
    }
  };
  return (
    <Dialog open={open} title="Import YAML" onClose={onClose} testId="import-dialog">
      <div className="import">
        <label className="import__label" htmlFor="import-text">
          Paste manifests (VirtualService, Route, Target, Service, Pod, EndpointSlice; the seed&apos;s{' '}
          <code>l7mp.io/MSM/v1</code> dialect is converted)
        </label>
        <textarea
          id="import-text"
          rows={12}
          spellCheck={false}
          value={text}
          onChange={(e) => setText(e.target.value)}
          data-testid="import-text"
        />
        <div className="button-row">
          <label>
            or open a file{' '}
            <input
              type="file"
              accept=".yaml,.yml,.json"
              onChange={async (e) => {
                const f = e.target.files?.[0];
                if (!f) return;
                setText(await f.text());
                setName(f.name);
              }}
            />
          </label>
        </div>
        <div className="button-row">
          <label>
            as file{' '}
            <input
              type="text"
              value={name}
              onChange={(e) => setName(e.target.value)}
              aria-label="File name for the import"
            />
          </label>
          <button
            type="button"
            disabled={!text.trim()}
            onClick={() => done(run({ type: 'setFileText', path: importFileName(draft, name), text }))}
            data-testid="import-add"
          >
            Add to the draft
          </button>
        </div>
        <h3>Examples</h3>
        {examples.isPending ? (
          <p>Loading the examples…</p>
        ) : examples.error ? (
          <p role="alert">Examples unavailable: {errorMessage(examples.error)}</p>
        ) : examples.data.length === 0 ? (
          <p>The server ships no examples.</p>
        ) : (
          <ul className="examples">
            {examples.data.map((ex) => (
              <li key={ex.name}>
                <button
                  type="button"
                  onClick={() => done(run({ type: 'replaceDraft', draft: { files: ex.files, layout: {} } }))}
                  data-testid={`example-${ex.name}`}
                >
                  Load {ex.name}
                </button>{' '}
                <span className="examples__desc">{ex.description}</span>
              </li>
            ))}
          </ul>
        )}
        <p className="hint">Loading an example replaces the draft; Ctrl+Z brings yours back.</p>
        <h3>Start over</h3>
        <div className="button-row">
          <button type="button" onClick={() => done(run({ type: 'clearMesh' }))} data-testid="clear-mesh">
            Empty the mesh
          </button>
          <span className="examples__desc">
            Deletes every VirtualService, Route and Target; keeps the Services, Pods and EndpointSlices, to
            draw a mesh on the same cluster (Ctrl+Z undoes it).
          </span>
        </div>
        {error ? (
          <p className="field-error field-error--error" role="alert">
            {error}
          </p>
        ) : null}
      </div>
    </Dialog>
  );
}
