# syntax=docker/dockerfile:1
# Two stages: the first installs the production dependencies from the lock file (tsx among
# them: every process runs its TypeScript through it, as in development and the tests, so
# there is no separate build output to drift from the source); the second is the runtime,
# with no npm cache or build tools, running as the unprivileged "node" user (uid 1000). It can run
# with a read-only root filesystem: nothing is written but var/ (emails, when SMTP_URL is unset).

# Node 22: Node 20 is past its end of life (2026-04-30), and some dependencies (cookie 2,
# content-disposition 3) already ask for 22. The tests run on 20.19 as well (package.json).
FROM node:22-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# npm ci's postinstall applies them (patch-package): see README's Development section.
COPY patches ./patches
# The lock file is written by npm 11 (as in development); the npm 10 that node:22 ships
# reads its optional platform packages differently and refuses it. Pinned: a build is repeatable.
RUN npm install -g npm@11.19.1 --no-audit --no-fund \
 && npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

FROM node:22-bookworm-slim AS runtime
ENV NODE_ENV=production
# tsx keeps a compile cache under os.tmpdir() and creates it at import, without a catch: with a
# read-only root filesystem (Kubernetes' readOnlyRootFilesystem) every process died there with
# EROFS before its first line. A fresh container's cache is always cold, so it costs nothing.
ENV TSX_DISABLE_CACHE=1
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json package-lock.json tsconfig.json ./
COPY drizzle ./drizzle
COPY src ./src
# var/ is where the worker writes emails when no SMTP server is configured.
RUN mkdir -p var && chown node:node var
# By number (node's uid and gid in the official image): with runAsNonRoot, the kubelet refuses
# to start an image whose user is a name, since it cannot tell that the name is not root.
USER 1000:1000
EXPOSE 3000 9464
# node runs as PID 1 and handles SIGTERM itself (graceful drain, see src/signals.ts).
CMD ["node", "--import", "tsx", "src/bin/api.ts"]
