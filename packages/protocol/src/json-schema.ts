import { z } from 'zod';

/** Which side of a schema to describe: what a client sends, or what parsing yields. */
export interface JsonSchemaOptions {
  /** `input` for request bodies (defaults optional), `output` for responses. Default `output`. */
  readonly io?: 'input' | 'output';
}

/**
 * The JSON Schema (draft 2020-12, as OpenAPI 3.1 uses) of a protocol schema. Refinements such as
 * the latent-size limit are not expressible and are left out; field bounds, patterns, enums,
 * defaults and `additionalProperties: false` are kept.
 */
export function toJsonSchema(
  schema: z.ZodType,
  options: JsonSchemaOptions = {},
): Record<string, unknown> {
  return z.toJSONSchema(schema, { io: options.io ?? 'output' }) as Record<string, unknown>;
}
