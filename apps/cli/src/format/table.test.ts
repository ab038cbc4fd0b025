import { describe, expect, it } from 'vitest';
import { formatMs, signed } from './numbers.js';
import { progressBar, ProgressBoard } from './progress-board.js';
import { renderTable } from './table.js';

describe('renderTable', () => {
  it('pads columns, right-aligns numbers and rules the header', () => {
    expect(
      renderTable(
        ['worker', 'jobs'],
        [
          ['w1', 3],
          ['w10', 12],
        ],
      ),
    ).toEqual(['  worker  jobs', '  ------  ----', '  w1         3', '  w10       12']);
  });
});

describe('numbers', () => {
  it('formats durations and signed values', () => {
    expect(formatMs(850.4)).toBe('850 ms');
    expect(formatMs(2_400)).toBe('2.4 s');
    expect(formatMs(185_000)).toBe('3 min 05 s');
    expect(signed(0.5, 2)).toBe('+0.50');
    expect(signed(-0.5, 2)).toBe('-0.50');
  });
});

describe('ProgressBoard', () => {
  it('draws bars in place on a terminal and keeps log lines above them', () => {
    let screen = '';
    const board = new ProgressBoard((text) => (screen += text), true, 100);
    board.add('a', 'job a', { step: 0, steps: 4, state: 'queued' });
    board.update('a', { step: 2, steps: 4, state: 'active', note: 'w1' });
    board.log('[w1] a log line');
    expect(progressBar(2, 4, 4)).toBe('[██░░] 2/4');
    expect(screen).toContain('\x1b[1A'); // moved up to redraw
    expect(screen).toContain('active  w1');
    expect(screen.lastIndexOf('[w1] a log line')).toBeLessThan(screen.lastIndexOf('job a'));
  });

  it('prints one plain line per state change elsewhere', () => {
    const lines: string[] = [];
    const board = new ProgressBoard((text) => lines.push(text), false);
    board.add('a', 'job a', { step: 0, steps: 4, state: 'queued' });
    board.update('a', { step: 1, steps: 4, state: 'active', note: 'w1' });
    board.update('a', { step: 2, steps: 4, state: 'active', note: 'w1' });
    board.update('a', { step: 4, steps: 4, state: 'completed', note: 'w1' });
    expect(lines).toEqual([
      '  job a: queued 0/4\n',
      '  job a: active 1/4 (w1)\n',
      '  job a: completed 4/4 (w1)\n',
    ]);
    expect(lines.join('')).not.toContain('\x1b');
  });
});
