# Production image: compiled JavaScript on Node 20, no dev dependencies, runs as an unprivileged user.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY scripts ./scripts
RUN npm run build && npm prune --omit=dev

FROM node:20-bookworm-slim
ENV NODE_ENV=production PORT=3000
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# The web app's stylesheet and scripts are served as they are, not compiled.
COPY --from=build /app/src/web/assets ./src/web/assets
USER node
EXPOSE 3000
# node directly, not npm, so SIGTERM reaches the service and it shuts down in order.
CMD ["node", "dist/src/main.js"]
