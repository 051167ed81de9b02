/** The interface version of the specification (1.0.0) that this service implements. */
export const SERVICE_VERSION = '1.0.0';
