import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLIENT_TYPES_FILE, clientTypesText } from './generate.js';

describe('the typed client', () => {
  it('has the types of the OpenAPI document the gateway serves (npm run client:types writes them)', async () => {
    const committed = readFileSync(join(import.meta.dirname, '..', CLIENT_TYPES_FILE), 'utf8');
    const generated = await clientTypesText();
    expect(generated).toContain('"/conversations/{id}"');
    expect(committed === generated, `${CLIENT_TYPES_FILE} is out of step with the OpenAPI document: run npm run client:types`).toBe(true);
  });
});
