/**
 * The Open Platform client package: the only way in. Everything else in opflow imports from here,
 * never from the files of this folder.
 */
export * from './catalogue';
export {
  createOpenPlatformClient,
  fileNameFromDisposition,
  type HttpTransport,
  type NodeHttpTransportOptions,
  nodeHttpTransport,
  type OpenPlatformClientOptions,
  type ResponseBody,
  TransportError,
  type TransportRequest,
  type TransportResponse,
} from './client';
export * from './envelope';
export * from './errors';
export * from './lenient';
export * from './operation-schemas';
export * from './operation-types';
export * from './operations';
export * from './redact';
export * from './schemas/requests';
export * from './schemas/responses';
export * from './stream';
export * from './types';
