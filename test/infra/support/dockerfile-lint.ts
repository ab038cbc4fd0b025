import { DockerfileParser, type Instruction } from 'dockerfile-ast';
import { validate } from 'dockerfile-utils';

/** One lint finding: the rule, the line (1-based) and what is wrong. */
export interface DockerfileFinding {
  readonly rule: string;
  readonly line: number;
  readonly message: string;
}

function lineOf(instruction: Instruction): number {
  return instruction.getRange().start.line + 1;
}

/** The instructions of the last build stage (what the image is). */
function finalStage(instructions: readonly Instruction[]): Instruction[] {
  let start = 0;
  instructions.forEach((instruction, index) => {
    if (instruction.getKeyword() === 'FROM') start = index;
  });
  return instructions.slice(start);
}

/**
 * Lints a Dockerfile: every diagnostic of dockerfile-utils (the validator behind the VS Code
 * Docker extension: syntax, arguments, duplicate CMD/ENTRYPOINT/HEALTHCHECK per stage, casing…)
 * plus flowfleet's image rules — every base image pinned to a tag other than `latest` (or a
 * digest), no ADD of a URL, the final stage runs as a non-root USER, has a HEALTHCHECK, and
 * starts its process in exec (JSON) form so SIGTERM reaches node and the drain runs.
 */
export function lintDockerfile(content: string): DockerfileFinding[] {
  const findings: DockerfileFinding[] = validate(content).map((diagnostic) => ({
    rule: `dockerfile-utils:${String(diagnostic.code ?? 'diagnostic')}`,
    line: diagnostic.range.start.line + 1,
    message: typeof diagnostic.message === 'string' ? diagnostic.message : diagnostic.message.value,
  }));
  const dockerfile = DockerfileParser.parse(content);
  const stages = new Set<string>();
  for (const from of dockerfile.getFROMs()) {
    const image = from.getImageName() ?? '';
    // dockerfile-ast answers null (not undefined) for an absent tag or digest.
    const tag = from.getImageTag() ?? undefined;
    const digest = from.getImageDigest() ?? undefined;
    if (!stages.has(image) && digest === undefined && (tag === undefined || tag === 'latest')) {
      findings.push({
        rule: 'pinned-base-image',
        line: lineOf(from),
        message: `base image ${image} has no pinned tag (got ${tag ?? 'none'})`,
      });
    }
    const stage = from.getBuildStage();
    if (stage !== null) stages.add(stage);
  }
  const instructions = dockerfile.getInstructions();
  for (const add of instructions.filter((i) => i.getKeyword() === 'ADD')) {
    if (/\bhttps?:\/\//i.test(add.getArgumentsContent() ?? '')) {
      findings.push({
        rule: 'no-add-url',
        line: lineOf(add),
        message: 'ADD of a URL (fetch in RUN, verified)',
      });
    }
  }
  const last = finalStage(instructions);
  const users = last.filter((i) => i.getKeyword() === 'USER');
  const user = users.at(-1)?.getArgumentsContent()?.trim().split(':')[0];
  if (user === undefined || user === 'root' || user === '0') {
    findings.push({
      rule: 'non-root-user',
      line: lineOf(users.at(-1) ?? last[0]!),
      message: `the image runs as ${user ?? 'root (no USER)'}`,
    });
  }
  const health = last.filter((i) => i.getKeyword() === 'HEALTHCHECK').at(-1);
  if (health === undefined || /^\s*NONE\b/i.test(health.getArgumentsContent() ?? '')) {
    findings.push({
      rule: 'healthcheck',
      line: lineOf(last[0]!),
      message: 'the image has no HEALTHCHECK',
    });
  }
  const starts = last.filter((i) => i.getKeyword() === 'CMD' || i.getKeyword() === 'ENTRYPOINT');
  if (starts.length === 0) {
    findings.push({ rule: 'exec-form', line: lineOf(last[0]!), message: 'no CMD or ENTRYPOINT' });
  }
  for (const start of starts) {
    if (!(start.getArgumentsContent() ?? '').trim().startsWith('[')) {
      findings.push({
        rule: 'exec-form',
        line: lineOf(start),
        message: `${start.getKeyword()} in shell form: /bin/sh, not node, would receive SIGTERM`,
      });
    }
  }
  return findings;
}
