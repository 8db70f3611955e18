# Airlock in a container: node:24-slim, built from the lockfile, run as a non-root user.
# Untested where it was written (no container engine there); see docs/deploying.md.
#
#   docker build -t airlock .
#   docker run -p 4000:4000 -e NODE_ENV=production -e DATABASE_URL=postgres://… -e AIRLOCK_MASTER_KEY=… airlock

# --- build: every dependency, then TypeScript → dist/
FROM node:24-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
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
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
# The pristine embedded cluster a first start copies (npm ci's postinstall could not make it above:
# it needs the build). Without it the first embedded start runs initdb, a few seconds longer.
RUN node dist/src/db/template-cli.js
# The embedded database (used when DATABASE_URL is unset) lives in /data, owned by the `node` user
# the image already has (uid 1000). Mount a volume there to keep it.
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 4000
# `airlock-dist` makes `airlock/tool` resolve to the build, so tool modules share the server's classes.
CMD ["node", "--conditions=airlock-dist", "dist/src/main.js"]
