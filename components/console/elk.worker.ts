// The one long-lived ELK worker (frontend-stack notes: a fresh worker per layout costs seconds), for
// graphs under LAYERED_LAYOUT_MIN_NODES; larger ones go to layered.worker.ts, which loads no ELK.
import ELK from 'elkjs/lib/elk.bundled.js';
import { elkGraphOf, positionsOf } from '@/lib/console/elkLayout';
import { answerLayouts } from './layoutWorkerMessages';

const elk = new ELK();
answerLayouts(async (input) => positionsOf(await elk.layout(elkGraphOf(input))));
