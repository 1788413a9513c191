export * from './envoyTypes';
export {
  type ProxyXdsSnapshot,
  type XdsRender,
  XDS_UNSUPPORTED,
  renderXds,
  renderXdsProxy,
  splitClusterName,
} from './renderXds';
export * from './loadReports';
export { XDS_INCONSISTENT, validateXdsSnapshot } from './validateXdsSnapshot';
