// The demo apps' public surface; server/controlPlane imports this folder.
export { startDemoApp } from './startDemoApp';
export type { DemoApp, DemoAppKind, DemoAppSpec, DemoRecord } from './DemoApp';
