import { describe, expect, it } from 'vitest';
import { childLogSink, servicePrefix } from './child-log-sink.js';
import { isShown, parseLogLine } from './log-line.js';

describe('parseLogLine', () => {
  it('turns a pino record into level, message and the useful fields', () => {
    const record = parseLogLine(
      JSON.stringify({
        level: 30,
        time: 1,
        service: 'worker',
        pid: 7,
        workerId: 'w1',
        jobId: 'b063a4cd-84a7-42c4-8256-50b4612ffff6',
        totalMs: 1170,
        platform: { device: 'cpu' },
        msg: 'rollout completed',
      }),
    );
    expect(record.level).toBe('info');
    expect(record.text).toBe('info  rollout completed jobId=b063a4cd totalMs=1170');
    expect(record.fields['workerId']).toBe('w1');
    expect(record.routine).toBe(false);
  });

  it('shows an error as its code and message', () => {
    const record = parseLogLine(
      JSON.stringify({
        level: 50,
        msg: 'job failed',
        err: { message: 'boom', code: 'RT_NON_FINITE', stack: 'x' },
      }),
    );
    expect(record.level).toBe('error');
    expect(record.text).toBe('error job failed err="RT_NON_FINITE: boom"');
  });

  it('marks HTTP access lines routine unless the status is an error', () => {
    expect(
      parseLogLine(JSON.stringify({ level: 30, msg: 'incoming request', req: {} })).routine,
    ).toBe(true);
    expect(
      parseLogLine(
        JSON.stringify({ level: 30, msg: 'request completed', res: { statusCode: 200 } }),
      ).routine,
    ).toBe(true);
    const failed = parseLogLine(
      JSON.stringify({ level: 30, msg: 'request completed', res: { statusCode: 409 } }),
    );
    expect(failed.routine).toBe(false);
    expect(failed.text).toContain('status=409');
  });

  it('keeps plain and malformed lines as they are', () => {
    expect(parseLogLine('Warning: something native')).toEqual({
      level: undefined,
      text: 'Warning: something native',
      fields: {},
      routine: false,
    });
    expect(parseLogLine('{not json').text).toBe('{not json');
    expect(parseLogLine("Warning: Couldn't load Vulkan: libvulkan.so.1: cannot open").routine).toBe(
      true,
    );
    expect(parseLogLine('[1,2]').level).toBeUndefined();
  });

  it('filters by level; plain lines always pass', () => {
    expect(isShown(parseLogLine('{"level":30,"msg":"a"}'), 'warn')).toBe(false);
    expect(isShown(parseLogLine('{"level":40,"msg":"a"}'), 'warn')).toBe(true);
    expect(isShown(parseLogLine('plain'), 'fatal')).toBe(true);
  });
});

describe('childLogSink', () => {
  it('prefixes shown lines with the service and drops routine ones unless verbose', () => {
    const lines: string[] = [];
    const sink = childLogSink({ level: 'info', verbose: false, write: (text) => lines.push(text) });
    sink('w1', parseLogLine('{"level":30,"msg":"worker started"}'));
    sink('coord', parseLogLine('{"level":30,"msg":"incoming request"}'));
    sink('coord', parseLogLine('{"level":20,"msg":"debug detail"}'));
    expect(lines).toEqual([`${servicePrefix('w1')} info  worker started`]);
    expect(servicePrefix('w1')).toBe('[w1]   ');
  });
});
