import { describe, expect, it } from 'vitest';
import type { Agent } from '../app/agent.js';
import type { Readiness } from '../app/readiness.js';
import { apiReferencePage } from './api-reference.js';
import { restEndpoints } from './router.js';

// The endpoints are only listed, never called: no agent behind them is needed.
const unusedAgent = {} as Agent;
const unusedReadiness = {} as Readiness;

describe('apiReferencePage', () => {
  const page = apiReferencePage();

  it('documents every mounted REST route with a curl example', () => {
    for (const endpoint of restEndpoints(unusedAgent, unusedReadiness)) {
      expect(page).toContain(`<code>${endpoint.method.toUpperCase()} ${endpoint.path}</code>`);
    }
    expect(page.match(/<pre class="curl">curl /g)?.length).toBe(restEndpoints(unusedAgent, unusedReadiness).length);
  });

  it('explains the session id and Authorization forwarding rules', () => {
    expect(page).toContain('X-Session-ID');
    expect(page).toMatch(/Authorization<\/code> header is forwarded/);
    expect(page).toContain('never logged');
  });

  it('shows the 409 body of an approval decided earlier, naming who decided', () => {
    expect(page).toContain('was already approved by alice at 2025-01-15T10:02:40.000Z');
  });

  it('documents approvals as resources, edit on approve and the audit trail (issue 15)', () => {
    expect(page).toContain('&quot;decided_by&quot;: &quot;alice&quot;');
    expect(page).toContain('&quot;edited_args&quot;');
    expect(page).toContain('&quot;status&quot;: &quot;pending&quot;');
    expect(page).toContain('&quot;expires_at&quot;');
    expect(page).toContain('&quot;kind&quot;: &quot;approval.decided&quot;');
    expect(page).toContain('{&quot;approved&quot;:true,&quot;arguments&quot;:{&quot;id&quot;:&quot;res-43&quot;}');
  });

  it('needs no external assets', () => {
    expect(page).not.toMatch(/<(script|link|img)[^>]+(src|href)=/i);
    expect(page).not.toMatch(/https?:\/\/(?!localhost:8080)/);
  });
});
