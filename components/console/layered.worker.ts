// The layered layout of large graphs (lib/console/layeredLayout.ts), off the main thread. A worker of
// its own: sharing ELK's, a first view waited for ELK's bundle to load and warm up (a 1,000-node layout
// of 100 ms was answered after 530 ms).
import { layeredLayout } from '@/lib/console/layeredLayout';
import { answerLayouts } from './layoutWorkerMessages';

answerLayouts(layeredLayout);
