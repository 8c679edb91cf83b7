import { ConfigError, loadConfig } from '../../src/config';

describe('account e-mail configuration (SMTP_URL, MAIL_FROM, MAIL_TIMEOUT_MS)', () => {
  it('defaults: no SMTP_URL, a From at PUBLIC_URL’s host, 10 s per SMTP step', () => {
    expect(loadConfig({}).mail).toEqual({ smtpUrl: undefined, from: 'Sales Pipeline <no-reply@localhost>', timeoutMs: 10_000 });
    expect(loadConfig({ PUBLIC_URL: 'https://crm.example.com' }).mail.from).toBe('Sales Pipeline <no-reply@crm.example.com>');
  });

  it('takes smtp:// and smtps:// URLs, an address or "Name <address>", and a timeout', () => {
    const mail = loadConfig({ SMTP_URL: 'smtps://user:pa%40ss@mail.example.com:465', MAIL_FROM: 'Acme CRM <crm@acme.example>', MAIL_TIMEOUT_MS: '2500' }).mail;
    expect(mail).toEqual({ smtpUrl: 'smtps://user:pa%40ss@mail.example.com:465', from: 'Acme CRM <crm@acme.example>', timeoutMs: 2500 });
    expect(loadConfig({ MAIL_FROM: 'crm@acme.example' }).mail.from).toBe('crm@acme.example');
  });

  it('refuses other schemes, a From that is not an address, and a bad timeout, naming the variable', () => {
    expect(() => loadConfig({ SMTP_URL: 'http://mail.example.com' })).toThrow(new ConfigError('SMTP_URL must use smtp: or smtps:, got http:'));
    expect(() => loadConfig({ SMTP_URL: 'not a url' })).toThrow('SMTP_URL is not a valid URL');
    expect(() => loadConfig({ MAIL_FROM: 'Acme CRM' })).toThrow('MAIL_FROM must be an address or "Name <address>"');
    expect(() => loadConfig({ MAIL_FROM: 'a@b.example\r\nBcc: x@y.example' })).toThrow('MAIL_FROM must be an address');
    expect(() => loadConfig({ MAIL_TIMEOUT_MS: '0' })).toThrow('MAIL_TIMEOUT_MS must be a whole number');
  });
});
