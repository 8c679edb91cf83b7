import nodemailer from 'nodemailer';
import type { MailConfig } from '../config';
import type { Logger } from '../logger';

/** One message of the web app: plain text, one recipient, and the one link it exists for. */
export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  /** The message's one-time link: the only secret it holds, and what the development fallback logs. */
  link: string;
}

export interface Mailer {
  /** False in production without SMTP_URL: pages that need e-mail say so instead of pretending. */
  readonly configured: boolean;
  send(message: MailMessage): Promise<void>;
}

/**
 * nodemailer to SMTP_URL, each step of the conversation under MAIL_TIMEOUT_MS so a stalled server
 * cannot hold a delivery forever. Without SMTP_URL, outside production only, the link is written
 * to the log (one info line) so a developer can follow it; in production nothing is sent and
 * `configured` is false (the service still starts: its API does not need e-mail).
 */
export function createMailer(config: MailConfig, logger: Logger, isProduction: boolean): Mailer {
  if (config.smtpUrl) {
    const url = new URL(config.smtpUrl);
    const secure = url.protocol === 'smtps:';
    const transport = nodemailer.createTransport({
      host: url.hostname.replace(/^\[|\]$/g, ''),
      port: url.port ? Number(url.port) : secure ? 465 : 587,
      secure,
      auth: url.username ? { user: decodeURIComponent(url.username), pass: decodeURIComponent(url.password) } : undefined,
      connectionTimeout: config.timeoutMs,
      greetingTimeout: config.timeoutMs,
      socketTimeout: config.timeoutMs,
    });
    return {
      configured: true,
      async send({ to, subject, text }) {
        await transport.sendMail({ from: config.from, to, subject, text });
      },
    };
  }
  if (isProduction) {
    return {
      configured: false,
      async send() {
        throw new Error('SMTP_URL is not set: e-mail cannot be sent in production');
      },
    };
  }
  return {
    configured: true,
    async send({ to, subject, link }) {
      // Only the link (and whom it was for), never the message body or anything else secret.
      logger.info({ mail: { to, subject, link } }, `e-mail not sent (no SMTP_URL, development only): ${subject} for ${to}: ${link}`);
    },
  };
}
