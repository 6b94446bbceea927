import { Router, type Request, type Response } from 'express';
import { METRICS_PATH } from '../app/route-access.js';
import { requestScope } from '../http/request-scope.js';
import type { Logger } from '../../services/common/log.js';
import { prometheusText, PROMETHEUS_CONTENT_TYPE } from '../../services/common/metrics.js';

/**
 * GET /metrics: every metric of this process in Prometheus' text format. In `asg up`
 * that is every service's, from the one MeterProvider they share (services/common/metrics.ts).
 * Who may read it is the route table's rule (app/route-access.ts).
 */
export function metricsRouter(log: Logger): Router {
  const router = Router();
  router.get(METRICS_PATH, (_req: Request, res: Response) => {
    requestScope(res).route = METRICS_PATH;
    prometheusText().then(
      (text) => res.status(200).type(PROMETHEUS_CONTENT_TYPE).send(text),
      (error: unknown) => {
        log.error('metrics could not be collected', { error: error instanceof Error ? error.message : String(error) });
        res.status(500).json({ error: 'metrics could not be collected' });
      },
    );
  });
  return router;
}
