# Airlock in a container: node:24-slim, built from the lockfile, run as a non-root user.
# Written, not built where it was written (no container engine there): test/docs/dockerfile.test.ts
# checks its promises statically and runs its health check; docs/deploying.md says what was tried.
#
#   docker build -t airlock .
#   docker run -p 4000:4000 -e DATABASE_URL=postgres://… -e AIRLOCK_MASTER_KEY=… airlock
#   docker run -p 4000:4000 -v airlock-data:/data airlock          # embedded database, kept in a volume

# --- build: every dependency, then TypeScript → dist/
FROM node:24-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# No src/ yet: the postinstall says so in one line and builds nothing (the build is the step below).
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY migrations ./migrations
RUN npm run build

# --- runtime: production dependencies and the build only
FROM node:24-slim
ENV NODE_ENV=production \
    PORT=4000 \
    AIRLOCK_DATA_DIR=/data
WORKDIR /app
COPY package.json package-lock.json ./
# --omit=dev: no TypeScript, codegen, vitest or browser tooling. esbuild and tsx are production
# dependencies only because `npm start` on a checkout compiles src/ and runs TypeScript tool
# modules; this image runs the build and loads neither (test/docs/dockerfile.test.ts keeps it so),
# so they go too.
RUN npm ci --omit=dev --no-audit --no-fund \
 && rm -rf node_modules/esbuild node_modules/@esbuild node_modules/tsx node_modules/.bin/esbuild node_modules/.bin/tsx \
 && npm cache clean --force
COPY --from=build /app/dist ./dist
# The pristine embedded cluster a first embedded start copies instead of running initdb (a few
# seconds saved; about 150 MB in node_modules/.cache). An image only ever used with DATABASE_URL
# can go without: docker build --build-arg EMBEDDED_TEMPLATE=no .
ARG EMBEDDED_TEMPLATE=yes
RUN if [ "$EMBEDDED_TEMPLATE" = yes ]; then node dist/src/db/template-cli.js; fi
# The embedded database (used when DATABASE_URL is unset) lives in /data, owned by the `node` user
# the image already has (uid 1000). No VOLUME instruction: it would give every container an
# anonymous volume, even one whose DATABASE_URL points elsewhere. To keep embedded data, mount one:
# -v airlock-data:/data.
RUN mkdir -p /data && chown node:node /data
USER node
EXPOSE 4000
# /ready answers 200 only when the database (and Redis, when REDIS_URL is set) answers; the image
# has no curl, so Node's fetch asks, with a timeout under Docker's own.
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 4000) + '/ready', { signal: AbortSignal.timeout(4000) }).then((response) => process.exit(response.status === 200 ? 0 : 1), () => process.exit(1))"]
# `airlock-dist` makes `airlock/tool` resolve to the build, so tool modules share the server's classes.
CMD ["node", "--conditions=airlock-dist", "dist/src/main.js"]
