import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

/**
 * The web chat: `vite build --config web/vite.config.ts` writes static files to web/dist,
 * which the gateway serves at `/` (and `asg web` on its own port). `vite --config
 * web/vite.config.ts` serves it for development, passing /trpc on to an agent at
 * ASG_AGENT_URL (default http://127.0.0.1:8080).
 */
const root = dirname(fileURLToPath(import.meta.url));

export default defineConfig({
  root,
  plugins: [react()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    sourcemap: true,
  },
  server: {
    proxy: { '/trpc': { target: process.env.ASG_AGENT_URL ?? 'http://127.0.0.1:8080', changeOrigin: true } },
  },
});
