# One image for every service of the shop; compose.yaml picks the service by command.
FROM node:20-bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY . .
RUN npm ci --no-audit --no-fund
# The services run bundled to plain JavaScript (dist/), without tsx's loader: see infra/build.ts.
RUN npm run build
ENV NODE_ENV=production
