/**
 * The README and the pages under docs/ as a reader meets them: the README stays a guide
 * (at most 4,000 words), nothing points at documents outside the repository (the project's
 * own planning notes, numbered issues), and every relative link leads to a file that exists —
 * and, into a Markdown page, to a heading that exists. The README's configuration example,
 * alone and with its approval policies, passes the check a start runs.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkConfigText, checkModels } from '../../services/common/config/check.js';
import { configSchema } from '../../services/common/config/schema.js';
import { stdioPathProblems } from '../../services/common/config/stdio-paths.js';
import { policyProblems } from '../../services/orchestrator/domain/approval-policy.js';
import { REPO_ROOT } from '../support/agent-process.js';

const PAGES = [
  'README.md',
  ...readdirSync(join(REPO_ROOT, 'docs'), { recursive: true, encoding: 'utf8' })
    .filter((path) => path.endsWith('.md'))
    .map((path) => join('docs', path))
    .sort(),
];
const read = (page: string) => readFileSync(join(REPO_ROOT, page), 'utf8');

/** References to documents a reader of the repository does not have. */
const OUTSIDE_REFERENCES: [string, RegExp][] = [
  // "seed", "the seed's": the original specification. `seed` in backticks is a value (an OpenAI request field, a stored dialect name).
  ['seed', /(?<!`)\bseed(?:'s)?\b(?!`)/i],
  // "issue" or "issues" and a number, with a space, a # or nothing between.
  ['issue N', /\bissues? ?#?\d+/i],
  ['DESIGN', /\bDESIGN\b/],
  ['a requirement id', /\b(?:N?FR|TS)-\d+/],
];

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens; repeats get -1, -2. */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const result = new Set<string>();
  const prose = markdown.replace(/```[\s\S]*?```/g, '');
  for (const [, heading] of prose.matchAll(/^#{1,6} (.+)$/gm)) {
    const slug = heading!
      .replaceAll('`', '')
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}_\- ]/gu, '')
      .replaceAll(' ', '-');
    const count = seen.get(slug) ?? 0;
    result.add(count === 0 ? slug : `${slug}-${count}`);
    seen.set(slug, count + 1);
  }
  return result;
}

describe('the README and docs/', () => {
  it('the README is a guide of at most 4,000 words', () => {
    const words = read('README.md').split(/\s+/).filter(Boolean).length;
    expect(words).toBeLessThanOrEqual(4_000);
  });

  it("the README's configuration example passes the check a start runs, from the clone's root", () => {
    const readme = read('README.md');
    const section = readme.slice(
      readme.indexOf('\n## Configuration\n'),
      readme.indexOf('\n## ', readme.indexOf('\n## Configuration\n') + 1),
    );
    const example = /```yaml\n([\s\S]*?)```/.exec(section)?.[1];
    expect(example, 'a yaml block under "## Configuration"').toBeDefined();
    const report = checkConfigText(example!, 'README.md', configSchema, {
      env: { GEMINI_API_KEY: 'set' },
      checks: [checkModels, (config) => ({ errors: stdioPathProblems(config, REPO_ROOT) })],
    });
    expect(report.errors).toEqual([]);
    expect(report.warnings).toEqual([]);
  });

  it("the README's approval policies, added to its configuration example, pass the same check", () => {
    const readme = read('README.md');
    const start = readme.indexOf('\n## Configuration\n');
    const blocks = [...readme.slice(start, readme.indexOf('\n## ', start + 1)).matchAll(/```yaml\n([\s\S]*?)```/g)].map(
      (match) => match[1]!,
    );
    expect(blocks, 'the configuration example, then the policies').toHaveLength(2);
    expect(blocks[1]).toMatch(/^approvals:\n {2}policies:\n/);
    // Each condition compiled and type-checked, as a start does.
    const report = checkConfigText(`${blocks[0]}${blocks[1]}`, 'README.md', configSchema, {
      env: { GEMINI_API_KEY: 'set' },
      checks: [checkModels, (config) => ({ errors: stdioPathProblems(config, REPO_ROOT) }), (config) => policyProblems(config)],
    });
    expect(report.errors).toEqual([]);
    expect(report.warnings).toEqual([]);
  });

  it.each(PAGES)('%s refers to no document outside the repository', (page) => {
    const found = read(page)
      .split('\n')
      .flatMap((line, index) =>
        OUTSIDE_REFERENCES.filter(([, pattern]) => pattern.test(line)).map(([name]) => `${page}:${index + 1}: ${name}: ${line.trim()}`),
      );
    expect(found).toEqual([]);
  });

  it.each(PAGES)('%s links only to files and headings that exist', (page) => {
    const broken: string[] = [];
    const prose = read(page).replace(/```[\s\S]*?```/g, '');
    for (const [, target] of prose.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/i.test(target!)) continue;
      const [path, anchor] = target!.split('#') as [string, string | undefined];
      const file = path === '' ? page : normalize(join(dirname(page), path));
      if (!existsSync(join(REPO_ROOT, file))) {
        broken.push(`${target}: no file ${file}`);
        continue;
      }
      if (anchor && file.endsWith('.md') && !anchors(read(file)).has(anchor)) broken.push(`${target}: no heading #${anchor} in ${file}`);
    }
    expect(broken).toEqual([]);
  });
});
