export * from './envoyTypes';
export {
  type ProxyXdsSnapshot,
  type XdsRender,
  XDS_UNSUPPORTED,
  renderXds,
  renderXdsProxy,
} from './renderXds';
export { XDS_INCONSISTENT, validateXdsSnapshot } from './validateXdsSnapshot';
