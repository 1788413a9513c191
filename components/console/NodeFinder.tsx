'use client';

import { type KeyboardEvent, type Ref, useDeferredValue, useId, useMemo, useState } from 'react';
import { findNodes } from '@/lib/console/findNodes';
import type { GraphNode } from '@/lib/console/meshGraph';
import { KIND_LABEL } from './kindColors';

/** Matches listed at once; the footer says how many more there are. */
const SHOWN = 12;

export interface NodeFinderProps {
  nodes: readonly GraphNode[];
  /** A match was chosen: select it, open its group and centre it. */
  onPick(nodeId: string): void;
  /** The input, for the `/` and Ctrl+K shortcuts. */
  inputRef?: Ref<HTMLInputElement>;
}

/**
 * Finds an object on the canvas by name (lib/console/findNodes.ts: also `kind:`, `ns:`, `is:error`), as
 * a combobox: arrows move through the matches, Enter or a click goes to one, Escape closes the list
 * and, once more, clears the words.
 */
export function NodeFinder({ nodes, onPick, inputRef }: NodeFinderProps) {
  const [query, setQuery] = useState('');
  const [open, setOpen] = useState(false);
  const [active, setActive] = useState(0);
  const listId = useId();
  // Typing stays responsive on a 5,000-node graph: the list follows the words a frame later if need be.
  const deferred = useDeferredValue(query);
  const found = useMemo(() => findNodes(nodes, deferred, SHOWN), [nodes, deferred]);
  const shown = open && deferred.trim() !== '';
  const current = Math.min(active, Math.max(0, found.nodes.length - 1));

  const pick = (id: string) => {
    setOpen(false);
    onPick(id);
  };
  const onKeyDown = (e: KeyboardEvent<HTMLInputElement>) => {
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      e.preventDefault();
      setOpen(true);
      const n = found.nodes.length;
      if (n > 0) setActive((current + (e.key === 'ArrowDown' ? 1 : n - 1)) % n);
    } else if (e.key === 'Enter') {
      const hit = found.nodes[current];
      if (hit && shown) {
        e.preventDefault();
        pick(hit.id);
      } else setOpen(true);
    } else if (e.key === 'Escape') {
      // The console's own Escape (clear the selection) is not for this one.
      e.stopPropagation();
      if (shown) setOpen(false);
      else {
        setQuery('');
        e.currentTarget.blur();
      }
    }
  };

  return (
    <div className="finder" role="search" data-testid="finder">
      <input
        ref={inputRef}
        type="search"
        role="combobox"
        aria-label="Find an object on the canvas"
        aria-expanded={shown}
        aria-controls={listId}
        aria-autocomplete="list"
        aria-activedescendant={shown && found.nodes[current] ? `${listId}-${current}` : undefined}
        placeholder="Find… (/)"
        autoComplete="off"
        spellCheck={false}
        value={query}
        data-testid="finder-input"
        onChange={(e) => {
          setQuery(e.target.value);
          setActive(0);
          setOpen(true);
        }}
        onFocus={() => setOpen(true)}
        onBlur={() => setOpen(false)}
        onKeyDown={onKeyDown}
      />
      {shown ? (
        <div className="finder__popup">
          <ul
            id={listId}
            role="listbox"
            aria-label="Matching objects"
            className="finder__list"
            data-testid="finder-list"
          >
            {found.nodes.map((n, i) => (
              <li
                key={n.id}
                id={`${listId}-${i}`}
                role="option"
                aria-selected={i === current}
                className={`finder__option finder__option--${n.kind.toLowerCase()}`}
                data-testid={`finder-option-${n.id}`}
                // Before the input's blur closes the list.
                onMouseDown={(e) => {
                  e.preventDefault();
                  pick(n.id);
                }}
                onMouseEnter={() => setActive(i)}
              >
                <span className="finder__kind">{KIND_LABEL[n.kind]}</span>
                <span className="finder__name">
                  {n.name}
                  <span className="finder__ns"> {n.namespace}</span>
                </span>
                {n.errors > 0 ? (
                  <span className="finder__count finder__count--error" title={`${n.errors} error(s)`}>
                    {n.errors}
                  </span>
                ) : n.warnings > 0 ? (
                  <span className="finder__count finder__count--warning" title={`${n.warnings} warning(s)`}>
                    {n.warnings}
                  </span>
                ) : null}
              </li>
            ))}
          </ul>
          <p className="finder__foot" role="status" data-testid="finder-status">
            {found.total === 0
              ? 'No object matches. Try kind:route, ns:default or is:error.'
              : found.total > found.nodes.length
                ? `${found.nodes.length} of ${found.total.toLocaleString('en')} matches: add words to narrow them`
                : `${found.total} match${found.total === 1 ? '' : 'es'}`}
          </p>
        </div>
      ) : null}
    </div>
  );
}
