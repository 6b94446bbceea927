/** Small JSON-over-HTTP helpers for the end-to-end suites. */
export interface JsonResponse<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

export async function request<T = any>(
  url: string,
  method: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<JsonResponse<T>> {
  const init: RequestInit = { method, headers: { ...headers }, signal: AbortSignal.timeout(60_000) };
  if (body !== undefined) {
    init.body = typeof body === 'string' ? body : JSON.stringify(body);
    (init.headers as Record<string, string>)['content-type'] = 'application/json';
  }
  const response = await fetch(url, init);
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    /* not JSON: keep the text */
  }
  return { status: response.status, body: parsed as T, headers: response.headers };
}

export const get = <T = any>(url: string, headers?: Record<string, string>) => request<T>(url, 'GET', undefined, headers);
export const post = <T = any>(url: string, body?: unknown, headers?: Record<string, string>) => request<T>(url, 'POST', body, headers);
