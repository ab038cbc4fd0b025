/** The worker's package version, advertised in its manifest. */
export const WORKER_VERSION = '0.1.0';
