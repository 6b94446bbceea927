// The image's HEALTHCHECK (deploy/Dockerfile), in Node because the slim image has no curl.
//   node deploy/healthcheck.mjs        the gateway (`asg up`, `asg serve gateway`): GET /health on PORT, else 8080
//   node deploy/healthcheck.mjs 7101   a gRPC service of `asg serve`: it accepts connections on that port
// Exit 0 when healthy, 1 when not, within 4 seconds either way (the HEALTHCHECK timeout is 5).
import { connect } from 'node:net';

const DEADLINE_MS = 4000;
const [grpcPort] = process.argv.slice(2);

function unhealthy(reason) {
  process.stderr.write(`unhealthy: ${reason}\n`);
  process.exit(1);
}

if (grpcPort === undefined) {
  const url = `http://127.0.0.1:${process.env.PORT || 8080}/health`;
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(DEADLINE_MS) });
    if (!response.ok) unhealthy(`${url} answered ${response.status}`);
  } catch (error) {
    unhealthy(`${url}: ${error instanceof Error ? error.message : String(error)}`);
  }
} else {
  const socket = connect({ host: '127.0.0.1', port: Number(grpcPort), timeout: DEADLINE_MS });
  socket.once('connect', () => {
    socket.destroy();
    process.exit(0);
  });
  socket.once('timeout', () => unhealthy(`no connection to port ${grpcPort} within ${DEADLINE_MS} ms`));
  socket.once('error', (error) => unhealthy(`port ${grpcPort}: ${error.message}`));
}
