/** The `source` every TS reference component reports, on whichever thread it runs. */
export const CPU_REFERENCE_SOURCE = 'cpu-reference';
