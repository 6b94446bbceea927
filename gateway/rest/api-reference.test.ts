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
    expect(page).toMatch(/<code>Authorization<\/code> header is forwarded as is/);
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

  it('says who may call each route, from the table the gateway enforces, with its 401 and 403 (issue 15)', () => {
    const section = (heading: string) => page.slice(page.indexOf(heading), page.indexOf('</section>', page.indexOf(heading)));
    const approve = section('<span class="method post">POST</span> <code>/approvals/:uuid</code>');
    expect(approve).toContain('Who may call: with auth configured: role approve (or admin)');
    expect(approve).toMatch(/<code>401<\/code><\/td><td>auth is configured and the request has no valid bearer token/);
    expect(approve).toMatch(/<code>403<\/code><\/td><td>the token is valid but its roles do not allow this route/);
    expect(section('<span class="method get">GET</span> <code>/audit</code>')).toContain('Who may call: with auth configured: role admin;');
    expect(section('<span class="method post">POST</span> <code>/conversations</code>')).toContain('role chat (or admin)');
    const health = section('<span class="method get">GET</span> <code>/health</code>');
    expect(health).toContain('Who may call: anyone, without a token');
    expect(health).not.toContain('<code>401</code>');
    expect(page).toContain('WWW-Authenticate: Bearer realm=');
    // Issue 15: approvers read conversations; only chat writes them.
    expect(section('<span class="method get">GET</span> <code>/conversations/:id</code>')).toContain('role chat or approve (or admin)');
    expect(section('<span class="method post">POST</span> <code>/conversations/:id/messages</code>')).toContain('Who may call: with auth configured: role chat (or admin)');
  });

  it('says whose a conversation is (issue 15)', () => {
    expect(page).toContain('a conversation belongs to whoever created it');
    expect(page).toContain('answers exactly as an unknown one');
  });

  it('needs no external assets', () => {
    expect(page).not.toMatch(/<(script|link|img)[^>]+(src|href)=/i);
    expect(page).not.toMatch(/https?:\/\/(?!localhost:8080)/);
  });
});
