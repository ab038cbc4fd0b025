import { ERROR_CODES, type ErrorCode } from '@flowfleet/errors';
import { ErrorEnvelopeSchema, PROTOCOL_SCHEMAS, toJsonSchema } from '@flowfleet/protocol';
import type { z } from 'zod';
import type { RouteInfo } from './route-table.js';

type JsonObject = Record<string, unknown>;

function jsonSchemaOf(schema: z.ZodType, io: 'input' | 'output'): JsonObject {
  const json = toJsonSchema(schema, { io });
  delete json['$schema'];
  return json;
}

const RAW = {
  binary: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } },
  text: { 'text/plain': { schema: { type: 'string' } } },
  html: { 'text/html': { schema: { type: 'string' } } },
  png: { 'image/png': { schema: { type: 'string', format: 'binary' } } },
} as const;

function jsonContent(schema: z.ZodType, io: 'input' | 'output'): JsonObject {
  return { 'application/json': { schema: jsonSchemaOf(schema, io) } };
}

/** `/v1/rollouts/:id` → `/v1/rollouts/{id}` */
function openApiPath(url: string): string {
  return url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

/** One OpenAPI parameter per property of a request part's (object) schema. */
function parametersIn(schema: z.ZodType | undefined, where: 'path' | 'query' | 'header') {
  if (schema === undefined) return [];
  const json = jsonSchemaOf(schema, 'input');
  const properties = (json['properties'] ?? {}) as Record<string, JsonObject>;
  const required = new Set((json['required'] ?? []) as string[]);
  return Object.entries(properties).map(([name, property]) => {
    const { description, ...rest } = property;
    return {
      name,
      in: where,
      required: where === 'path' || required.has(name),
      ...(description === undefined ? {} : { description }),
      schema: rest,
    };
  });
}

function parametersOf(route: RouteInfo): JsonObject[] {
  const { params, querystring, headers } = route.schema;
  const path = parametersIn(params, 'path');
  // A path parameter the route declares no schema for is still a string.
  const named = [...route.url.matchAll(/:([A-Za-z0-9_]+)/g)].map((match) => match[1] ?? '');
  for (const name of named) {
    if (!path.some((parameter) => parameter.name === name)) {
      path.push({ name, in: 'path', required: true, schema: { type: 'string' } });
    }
  }
  return [...path, ...parametersIn(querystring, 'query'), ...parametersIn(headers, 'header')];
}

/** Every code a route may answer with: its own, its validation codes, and auth's. */
function errorCodesOf(route: RouteInfo): ErrorCode[] {
  const codes = new Set<ErrorCode>(route.doc.errors ?? []);
  const { params, querystring, headers, body } = route.schema;
  if (params !== undefined || querystring !== undefined) codes.add('API_INVALID_PARAMS');
  if (headers !== undefined || body !== undefined)
    codes.add(route.doc.bodyError ?? 'API_INVALID_BODY');
  if (route.doc.usesRedis === true) codes.add('API_REDIS_UNAVAILABLE');
  if (route.roles.length > 0) codes.add('API_UNAUTHORIZED').add('API_FORBIDDEN');
  return [...codes];
}

function errorResponses(route: RouteInfo): JsonObject {
  const byStatus = new Map<number, string[]>();
  for (const code of errorCodesOf(route)) {
    const status = ERROR_CODES[code].httpStatus;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const responses: JsonObject = {};
  for (const [status, list] of [...byStatus.entries()].sort(([a], [b]) => a - b)) {
    responses[String(status)] = {
      description: list.join(', '),
      content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } },
    };
  }
  return responses;
}

function successResponses(route: RouteInfo): JsonObject {
  const responses: JsonObject = {};
  for (const [status, schema] of Object.entries(route.schema.response ?? {})) {
    responses[status] = { description: 'success', content: jsonContent(schema, 'output') };
  }
  const { produces } = route.doc;
  if (produces !== undefined) {
    responses[String(produces.status)] = { description: 'success', content: RAW[produces.body] };
  }
  return responses;
}

/**
 * The OpenAPI 3.1 document of the coordinator, generated from the routes the server registered
 * and the zod schemas fastify validates and serializes each with (so it cannot list a route that
 * does not exist, nor describe a body other than the one checked).
 */
export function buildOpenApi(routes: readonly RouteInfo[], version: string): JsonObject {
  const paths: Record<string, Record<string, JsonObject>> = {};
  for (const route of routes) {
    const path = openApiPath(route.url);
    const operation: JsonObject = {
      summary: route.doc.summary,
      operationId: `${route.method.toLowerCase()} ${route.url}`,
      'x-flowfleet-roles': route.roles,
      security:
        route.roles.length === 0
          ? []
          : route.doc.browserToken === undefined
            ? [{ bearer: [] }]
            : [{ bearer: [] }, { queryToken: [] }],
      parameters: parametersOf(route),
      responses: { ...successResponses(route), ...errorResponses(route) },
    };
    const { body } = route.schema;
    if (body !== undefined) {
      operation['requestBody'] = { required: true, content: jsonContent(body, 'input') };
    } else if (route.doc.consumes === 'binary') {
      operation['requestBody'] = { required: true, content: RAW.binary };
    }
    paths[path] = { ...paths[path], [route.method.toLowerCase()]: operation };
  }
  const schemas: JsonObject = { ErrorEnvelope: jsonSchemaOf(ErrorEnvelopeSchema, 'output') };
  for (const [name, schema] of Object.entries(PROTOCOL_SCHEMAS)) {
    schemas[name] = jsonSchemaOf(schema as z.ZodType, 'output');
  }
  return {
    openapi: '3.1.0',
    info: { title: 'flowfleet coordinator', version },
    paths,
    components: {
      schemas,
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer' },
        // Browser-facing routes only (the dashboard page): the same token as `?token=`.
        queryToken: { type: 'apiKey', in: 'query', name: 'token' },
      },
    },
  };
}
