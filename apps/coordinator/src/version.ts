/** The coordinator's version (kept equal to package.json; shown in the OpenAPI document). */
export const COORDINATOR_VERSION = '0.1.0';
