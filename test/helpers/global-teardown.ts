export default async function globalTeardown(): Promise<void> {
  const database = (globalThis as { __embeddedDatabase__?: { stop(): Promise<void> } }).__embeddedDatabase__;
  await database?.stop();
}
