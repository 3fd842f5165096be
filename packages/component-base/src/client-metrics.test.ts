import { Registry } from 'prom-client';
import { ComponentMetrics } from './client-metrics.js';

// The client-side series under client-go's names and labels.
describe('ComponentMetrics.client()', () => {
  it('counts requests, and retries as rest_client_request_retries_total{code,verb,host}', async () => {
    const m = new ComponentMetrics(new Registry());
    const client = m.client();
    client.observe({ method: 'GET', host: '127.0.0.1:6443', code: 200, ms: 12 });
    client.observe({ method: 'POST', host: '127.0.0.1:6443', code: 0, ms: 3 });
    client.retried({ method: 'POST', host: '127.0.0.1:6443', code: 429 });
    client.retried({ method: 'POST', host: '127.0.0.1:6443', code: 429 });
    client.retried({ method: 'GET', host: '127.0.0.1:6443', code: 503 });
    const text = await m.registry.metrics();
    expect(text).toMatch(/^rest_client_requests_total\{code="200",method="GET",host="127\.0\.0\.1:6443"\} 1$/m);
    expect(text).toMatch(/^rest_client_requests_total\{code="<error>",method="POST",host="127\.0\.0\.1:6443"\} 1$/m);
    expect(text).toMatch(/^rest_client_request_retries_total\{code="429",verb="POST",host="127\.0\.0\.1:6443"\} 2$/m);
    expect(text).toMatch(/^rest_client_request_retries_total\{code="503",verb="GET",host="127\.0\.0\.1:6443"\} 1$/m);
  });
});
