import { describe, expect, it } from 'vitest';
import { toJsonSchema } from './json-schema.js';
import { PROTOCOL_SCHEMAS } from './schemas.js';

describe('toJsonSchema', () => {
  it.each(Object.entries(PROTOCOL_SCHEMAS))('converts %s in both directions', (_name, schema) => {
    for (const io of ['input', 'output'] as const) {
      const json = toJsonSchema(schema, { io });
      expect(json.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
      expect(JSON.parse(JSON.stringify(json))).toEqual(json);
    }
  });

  it('describes the rollout request body with its required fields, bounds and defaults', () => {
    const input = toJsonSchema(PROTOCOL_SCHEMAS.RolloutRequest, { io: 'input' }) as {
      required: string[];
      additionalProperties: boolean;
      properties: Record<string, Record<string, unknown>>;
    };
    expect(input.required.sort()).toEqual(['model', 'prompt', 'seeds']);
    expect(input.additionalProperties).toBe(false);
    expect(input.properties.steps).toMatchObject({ type: 'integer', minimum: 1, maximum: 100 });
    expect(input.properties.seeds).toMatchObject({ minItems: 1, maxItems: 64 });
    // The sampling fields a client leaves out take the model card's defaults (the card fills
    // them at the edge; the schema states none of its own).
    expect(input.properties.sampler).toMatchObject({ enum: ['sde', 'ode'] });
    expect(input.properties.sampler).not.toHaveProperty('default');
    expect(String(input.properties.shift?.description)).toMatch(/default: the model card's/);
    expect(input.properties.promptEmbeds).toMatchObject({ type: 'object' });

    const output = toJsonSchema(PROTOCOL_SCHEMAS.RolloutRequest) as { required: string[] };
    expect(output.required).not.toContain('steps');
    expect(output.required).toContain('constraints');
  });
});
