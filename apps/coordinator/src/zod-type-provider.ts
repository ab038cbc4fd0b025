import { FlowfleetError } from '@flowfleet/errors';
import { validationError } from '@flowfleet/protocol';
import type {
  FastifySchemaCompiler,
  FastifySerializerCompiler,
  FastifyTypeProvider,
} from 'fastify';
import { z } from 'zod';

// One zod description per route (DESIGN §5): fastify validates the request parts with it, the
// handler's types are inferred from it, every JSON answer is checked against it, and the OpenAPI
// document is generated from it. A small helper of our own rather than fastify-type-provider-zod:
// of that library we would use only these three pieces; its required peers (@fastify/swagger,
// openapi-types) serve an OpenAPI path we do not take (ours is generated from the route table,
// which also knows roles and error codes); and its validation errors flatten zod's paths into a
// JSON pointer string, where our envelope keeps each issue's path as an array.

/** Request parts fastify validates, as it names them. */
export type RequestPart = 'params' | 'querystring' | 'headers' | 'body';

/** Types a route's handler from its zod schemas: request parts as parsed, answers as accepted. */
export interface ZodTypeProvider extends FastifyTypeProvider {
  validator: this['schema'] extends z.ZodType ? z.output<this['schema']> : unknown;
  serializer: this['schema'] extends z.ZodType ? z.input<this['schema']> : unknown;
}

/**
 * A request part that failed its route schema. Fastify hands it to the error handler, which gives
 * it the route's code (`RouteDoc.bodyError` for bodies).
 */
export class RequestValidationError extends Error {
  readonly part: RequestPart;
  readonly zodError: z.ZodError;
  readonly statusCode = 400;

  constructor(part: RequestPart, zodError: z.ZodError) {
    super(`invalid ${part}`);
    this.name = 'RequestValidationError';
    this.part = part;
    this.zodError = zodError;
  }
}

function zodSchemaOf(schema: unknown, where: string): z.ZodType {
  if (!(schema instanceof z.ZodType)) {
    throw new Error(`${where}: route schemas are zod schemas (got ${typeof schema})`);
  }
  return schema;
}

/** Validates (and parses: coercions, defaults) a request part with its zod schema. */
export const zodValidatorCompiler: FastifySchemaCompiler<unknown> = ({
  schema,
  method,
  url,
  httpPart,
}) => {
  const zodSchema = zodSchemaOf(schema, `${method} ${url} ${String(httpPart)}`);
  const part = (httpPart ?? 'body') as RequestPart;
  return (data: unknown) => {
    const result = zodSchema.safeParse(data);
    if (result.success) return { value: result.data };
    return { error: new RequestValidationError(part, result.error) };
  };
};

/**
 * Checks a JSON answer against its zod schema and serializes what the schema outputs (so unknown
 * keys never leak). A mismatch is a defect: a coded 500 `COORD_RESPONSE_INVALID`, logged by the
 * error handler, rather than an answer that breaks the clients validating the same schema.
 */
export const zodSerializerCompiler: FastifySerializerCompiler<unknown> = ({
  schema,
  method,
  url,
  httpStatus,
}) => {
  const route = `${method} ${url}`;
  const zodSchema = zodSchemaOf(schema, `${route} ${httpStatus}`);
  return (data: unknown) => {
    const result = zodSchema.safeParse(data);
    if (result.success) return JSON.stringify(result.data);
    const invalid = validationError(result.error, 'COORD_RESPONSE_INVALID', `${route} answer`);
    throw new FlowfleetError('COORD_RESPONSE_INVALID', invalid.message, {
      details: { route, status: Number(httpStatus), issues: invalid.details.issues },
      cause: result.error,
    });
  };
};
