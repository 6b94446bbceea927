import { realpathSync } from 'node:fs';
import { dirname } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ToolError } from './errors.js';
import type { ResolvedPath, ResolveMode } from './sandbox.js';
import { makeFixture, type Fixture } from './testing/fixture.js';
import { callTool, toolNamed } from './tools/index.js';

/**
 * Property-based fuzzing of path inputs. The seed is fixed so a run is repeatable; on a failure
 * fast-check prints the seed and the counterexample's path, and `FUZZ_SEED=<n>` reruns with
 * another seed.
 */
const SEED = Number(process.env.FUZZ_SEED ?? 20_260_707);

let fx: Fixture;
beforeAll(() => {
  fx = makeFixture({ inMemory: true });
});
afterAll(() => fx.cleanup());

/** Segments that mean something in the fixture, and the usual suspects, plus any text at all. */
const segment = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      '..',
      '.',
      '',
      'sub',
      'inner',
      'file.txt',
      'note.md',
      'missing',
      'outside',
      'secret.txt',
      'readonly',
      'roots',
      'workspace',
    ),
  },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      'link_in_file',
      'link_in_dir',
      'link_abs_in',
      'link_out_file',
      'link_out_dir',
      'link_out_rel',
      'link_root_parent',
      'link_other_root',
      'link_dangling_out',
      'link_dangling_in',
      'link_loop_a',
      'link_self',
      'link_chain_out',
      'link_to_root',
      'link_proc',
      'link_base',
      'link_up',
    ),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom('%2e%2e', '%2f', '..\\', '\\', '\u2025', '\uFF0E\uFF0E', '..\u2215', '\0', '~', '...', ' ..', '.. '),
  },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 12 }) },
);

const pathInput = fc.oneof(
  {
    weight: 6,
    arbitrary: fc
      .tuple(fc.boolean(), fc.array(segment, { maxLength: 14 }), fc.constantFrom('/', '//', '/./'))
      .map(([absolute, segments, separator]) => (absolute ? '/' : '') + segments.join(separator)),
  },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 80 }) },
  {
    weight: 1,
    arbitrary: fc.array(fc.constantFrom('../', 'a/', './', 'link_in_dir/', 'sub/'), { maxLength: 40 }).map((parts) => parts.join('')),
  },
);

const ws = () => fx.sandbox.roots.get('workspace')!;
const insideWorkspace = (abs: string) => abs === fx.roots.workspace || abs.startsWith(`${fx.roots.workspace}/`);

/** The real path of `abs` if it exists, else of its nearest existing ancestor. */
function realOfNearestExisting(abs: string): string {
  for (let current = abs; ; current = dirname(current)) {
    try {
      return realpathSync(current);
    } catch {
      if (current === '/') return '/';
    }
  }
}

describe('path fuzzing', () => {
  it.each<ResolveMode>(['follow', 'entry'])('resolution in %s mode refuses, or stays inside the root', async (mode) => {
    await fc.assert(
      fc.asyncProperty(pathInput, async (input) => {
        let resolved: ResolvedPath;
        try {
          resolved = await fx.sandbox.resolve(ws(), input, mode);
        } catch (error) {
          // A refusal is fine; anything but a ToolError is a bug (and its message could leak a host path).
          expect(error).toBeInstanceOf(ToolError);
          expect((error as Error).message).not.toContain(fx.base);
          return;
        }
        expect(insideWorkspace(resolved.abs), `${JSON.stringify(input)} → ${resolved.abs}`).toBe(true);
        expect(resolved.rel === '..' || resolved.rel.startsWith('../') || resolved.rel.startsWith('/')).toBe(false);
        // What exists there is really inside the root. In entry mode the entry itself (say, a link) is not
        // followed, so the folder holding it is what must be inside.
        const checked = mode === 'entry' && resolved.stats && resolved.rel !== '' ? dirname(resolved.abs) : resolved.abs;
        expect(insideWorkspace(realOfNearestExisting(checked)), `${JSON.stringify(input)}: real path of ${checked}`).toBe(true);
        if (mode === 'follow' && resolved.stats) expect(realpathSync(resolved.abs)).toBe(resolved.abs);
      }),
      { seed: SEED, numRuns: 500, endOnFailure: true },
    );
  });

  it('tool calls with generated paths never read, list or change anything outside the roots', async () => {
    const outsideBefore = fx.snapshotOutside();
    const tools = [
      'read_file',
      'list_folder',
      'stat_file',
      'write_file',
      'create_folder',
      'remove_file',
      'remove_folder',
      'move',
      'copy',
      'grep',
      'glob',
      'patch_file',
    ] as const;
    const argsFor = (tool: (typeof tools)[number], path: string, other: string): Record<string, unknown> => {
      switch (tool) {
        case 'write_file':
          return { root: 'workspace', path, content: 'fuzz' };
        case 'patch_file':
          return { root: 'workspace', path, patch: '--- /dev/null\n+++ b/x\n@@ -0,0 +1 @@\n+fuzz\n' };
        case 'move':
        case 'copy':
          return { source_root: 'workspace', source_path: path, dest_root: 'dest', dest_path: other, overwrite: true };
        case 'grep':
          return { root: 'workspace', path, pattern: '.' };
        case 'glob':
          return { root: 'workspace', path, pattern: '*' };
        default:
          return { root: 'workspace', path };
      }
    };
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...tools), pathInput, pathInput, async (tool, path, other) => {
        const result = await callTool(fx.sandbox, toolNamed(tool)!, argsFor(tool, path, other));
        const text = result.content.map((block) => (block.type === 'text' ? block.text : '')).join('\n');
        expect(text).not.toContain(fx.token);
        expect(text).not.toContain(fx.base);
        expect(fx.snapshotOutside()).toBe(outsideBefore);
        if (!result.isError && !toolNamed(tool)!.readOnly) fx.resetWorkspace();
      }),
      { seed: SEED, numRuns: 400, endOnFailure: true },
    );
  });
});
