import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  /** The envelope: who the server was told the message is from and for (RCPT TO), as SMTP carried it. */
  envelopeFrom: string;
  recipients: string[];
  /** Header values (unfolded), lower-case names. */
  headers: Record<string, string>;
  subject: string;
  /** The body, decoded from quoted-printable when sent so. */
  text: string;
}

function decodeQuotedPrintable(body: string): string {
  return Buffer.from(
    body.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/gi, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16))),
    'latin1',
  ).toString('utf8');
}

/** Parses the little of RFC 5322 the app's plain-text messages use. */
function parse(raw: string): Pick<ReceivedMail, 'headers' | 'subject' | 'text'> {
  const split = raw.indexOf('\r\n\r\n');
  const head = raw.slice(0, split).replace(/\r\n[ \t]+/g, ' ');
  const headers: Record<string, string> = {};
  for (const line of head.split('\r\n')) {
    const at = line.indexOf(':');
    if (at > 0) headers[line.slice(0, at).trim().toLowerCase()] = line.slice(at + 1).trim();
  }
  const body = raw.slice(split + 4);
  const text = /quoted-printable/i.test(headers['content-transfer-encoding'] ?? '') ? decodeQuotedPrintable(body) : body;
  return { headers, subject: headers.subject ?? '', text };
}

/**
 * A loopback SMTP server that accepts every message (any or no authentication, no TLS) and keeps
 * it, so tests read what the app e-mailed as a recipient would. `url` is the app's SMTP_URL.
 */
export class SmtpInbox {
  readonly messages: ReceivedMail[] = [];
  /** The AUTH logins the server was given, as username:password. */
  readonly logins: string[] = [];
  private server!: SMTPServer;
  url = '';

  async start(): Promise<this> {
    this.server = new SMTPServer({
      authOptional: true,
      allowInsecureAuth: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      onAuth: (auth, _session, callback) => {
        this.logins.push(`${auth.username}:${auth.password}`);
        callback(null, { user: auth.username });
      },
      onData: (stream, session, callback) => {
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('end', () => {
          this.messages.push({
            envelopeFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            recipients: session.envelope.rcptTo.map((to) => to.address),
            ...parse(Buffer.concat(chunks).toString('utf8')),
          });
          callback();
        });
      },
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', () => resolve()));
    const { port } = this.server.server.address() as AddressInfo;
    this.url = `smtp://mailer:secret@127.0.0.1:${port}`;
    return this;
  }

  /** The messages for `address` so far, oldest first. */
  for(address: string): ReceivedMail[] {
    return this.messages.filter((mail) => mail.recipients.includes(address));
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

export async function startSmtpInbox(): Promise<SmtpInbox> {
  return new SmtpInbox().start();
}
