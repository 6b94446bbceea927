import { useEffect, useState } from 'react';
import type { ApprovalRecordJson } from '../api-types.js';
import { api } from '../trpc.js';

export type InputRequestJson = NonNullable<ApprovalRecordJson['input_request']>;

/**
 * What a pending approval asks, when it asks for input (an MCP server's question): only the
 * approval's record says so, read once per approval. Undefined for an ordinary call (or
 * while the record is read: the card shows the call until then).
 */
export function useInputRequest(uuid: string): InputRequestJson | undefined {
  const [request, setRequest] = useState<InputRequestJson>();
  useEffect(() => {
    let current = true;
    setRequest(undefined);
    api.approvals.get
      .query({ uuid })
      .then((record) => {
        if (current && record.kind === 'input' && record.input_request) setRequest(record.input_request);
      })
      // A record that cannot be read leaves the card as it is: deciding still works, and says why if it fails.
      .catch(() => undefined);
    return () => {
      current = false;
    };
  }, [uuid]);
  return request;
}
