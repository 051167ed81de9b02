/** The interface version of the specification (1.0.0) that this service implements. */
export const SERVICE_VERSION = '1.0.0';

/**
 * Who answers for the interface, named in the OpenAPI and AsyncAPI documents (Spectral's default
 * rulesets ask for a name, a URL and an email). The repository has no public home yet: these are
 * the maintainers' identity of its commits, on the reserved `.example` domain so they cannot reach
 * a stranger. Replace them with the team's real address when there is one.
 */
export const SERVICE_CONTACT = {
  name: 'Report Store maintainers',
  url: 'https://a-seed-05f1e851.example/report-store',
  email: 'maintainers@users.noreply.a-seed-05f1e851.example',
} as const;
