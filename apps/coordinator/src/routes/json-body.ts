import { FlowfleetError } from '@flowfleet/errors';
import type { FastifyInstance } from 'fastify';

const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Makes `app` decode JSON bodies as strict UTF-8: a body with bytes that are not UTF-8 is refused
 * with 400 `API_INVALID_UTF8` instead of being decoded with U+FFFD in their place (what the default
 * parser does, so a prompt would run as other text than the client sent). The text is then parsed
 * by fastify's own JSON parser (prototype-poisoning checks and its error codes kept).
 */
export function registerStrictJsonParser(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    let text: string;
    try {
      text = STRICT_UTF8.decode(body as Buffer);
    } catch (cause) {
      done(
        new FlowfleetError('API_INVALID_UTF8', 'the JSON body is not valid UTF-8', {
          details: {},
          cause,
        }),
        undefined,
      );
      return;
    }
    parseJson(request, text, done);
  });
}
