import { ERROR_CODES, type ErrorCode } from '@flowfleet/errors';
import { ErrorEnvelopeSchema, PROTOCOL_SCHEMAS, toJsonSchema } from '@flowfleet/protocol';
import type { z } from 'zod';
import type { RouteInfo } from './route-table.js';

type JsonObject = Record<string, unknown>;

const BINARY = { type: 'string', format: 'binary' };

type Body = z.ZodType | 'binary' | 'text' | 'html';

function schemaOf(body: Body, io: 'input' | 'output'): JsonObject {
  if (body === 'binary') return BINARY;
  if (body === 'text' || body === 'html') return { type: 'string' };
  const schema = toJsonSchema(body, { io });
  delete schema['$schema'];
  return schema;
}

const MEDIA_TYPES = { binary: 'application/octet-stream', text: 'text/plain', html: 'text/html' };

function contentOf(body: Body, io: 'input' | 'output'): JsonObject {
  const type = typeof body === 'string' ? MEDIA_TYPES[body] : 'application/json';
  return { [type]: { schema: schemaOf(body, io) } };
}

/** `/v1/rollouts/:id` → `/v1/rollouts/{id}` */
function openApiPath(url: string): string {
  return url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

function parametersOf(route: RouteInfo): JsonObject[] {
  const names = [...route.url.matchAll(/:([A-Za-z0-9_]+)/g)].map((match) => match[1] ?? '');
  const shape = route.doc.params === undefined ? undefined : schemaOf(route.doc.params, 'input');
  const properties = (shape?.['properties'] ?? {}) as Record<string, JsonObject>;
  const path = names.map((name) => ({
    name,
    in: 'path',
    required: true,
    schema: properties[name] ?? { type: 'string' },
  }));
  const headers = (route.doc.headers ?? []).map((header) => ({
    name: header.name,
    in: 'header',
    required: header.required,
    description: header.description,
    schema: schemaOf(header.schema, 'input'),
  }));
  return [...path, ...headers];
}

function errorResponses(route: RouteInfo): JsonObject {
  const codes: string[] = [...(route.doc.errors ?? [])];
  if (route.roles.length > 0) codes.push('API_UNAUTHORIZED', 'API_FORBIDDEN');
  const byStatus = new Map<number, string[]>();
  for (const code of codes) {
    const status = ERROR_CODES[code as ErrorCode]?.httpStatus ?? 500;
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

/**
 * The OpenAPI 3.1 document of the coordinator, generated from the routes the server registered
 * and the zod schemas each route declares (so it cannot list a route that does not exist, nor
 * miss one that does).
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
      responses: {
        [String(route.doc.response.status)]: {
          description: 'success',
          content: contentOf(route.doc.response.body, 'output'),
        },
        ...errorResponses(route),
      },
    };
    if (route.doc.body !== undefined) {
      operation['requestBody'] = { required: true, content: contentOf(route.doc.body, 'input') };
    }
    paths[path] = { ...paths[path], [route.method.toLowerCase()]: operation };
  }
  const schemas: JsonObject = { ErrorEnvelope: schemaOf(ErrorEnvelopeSchema, 'output') };
  for (const [name, schema] of Object.entries(PROTOCOL_SCHEMAS)) {
    schemas[name] = schemaOf(schema as z.ZodType, 'output');
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
