// The fast lane (`npm run test:unit`, jest.unit.config.js) runs without servers: whatever the
// shell exports, its tests see no database or Redis to connect to.
delete process.env.TEST_DATABASE_URL;
delete process.env.DATABASE_URL;
delete process.env.REDIS_URL;
