# syntax=docker/dockerfile:1
# Three stages: `build` has every dependency; `runtime` (the default) has
# the bundled services, production dependencies only, and runs as the unprivileged `node`
# user; `web` serves the built page with nginx, unprivileged. compose.yaml picks a stage by
# `target` and a service by `command`.

# Node 24, the shop's one runtime. better-sqlite3 13's Node-API binary ships in its package,
# so nothing compiles: no toolchain in any stage.
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY . .
RUN npm ci --no-audit --no-fund
# The services run bundled to plain JavaScript (dist/), without tsx's loader: see infra/build.ts.
RUN npm run build
# The page, built static; its API's address is fixed at build time.
ARG VITE_API_URL=http://localhost:8080
RUN VITE_API_URL=$VITE_API_URL npm run build --workspace web
# What the bundles import from node_modules, and nothing a build or a test needs: pruned,
# not installed again, so kafkajs keeps the fix patch-package applied at `npm ci`
# (patches/); the optional node-linux-* packages go too, the image has its own Node 24.
RUN npm prune --omit=dev --omit=optional --ignore-scripts --no-audit --no-fund

FROM nginxinc/nginx-unprivileged:1.27-alpine AS web
COPY --from=build /app/web/dist /usr/share/nginx/html
# nginx-unprivileged listens on 8080 as the user nginx.

FROM node:24-bookworm-slim AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# The services' databases live under /data (a volume in compose), owned by the user they run as.
RUN mkdir /data && chown node:node /data
USER node
CMD ["node", "--max-semi-space-size=4", "--heap-growing-percent=20", "dist/orders-api.mjs"]
