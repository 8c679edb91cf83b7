/**
 * Mailbox providers many companies' people use: their domain says nothing about an employer. One
 * list for the lead score (a personal address scores lower) and for matching a lead to a company a
 * CRM or PSA holds (a personal domain names no company). No imports: a leaf either side may use.
 */
export const PERSONAL_MAIL_DOMAINS: ReadonlySet<string> = new Set([
  'gmail.com',
  'googlemail.com',
  'outlook.com',
  'hotmail.com',
  'live.com',
  'msn.com',
  'yahoo.com',
  'icloud.com',
  'me.com',
  'aol.com',
  'proton.me',
  'protonmail.com',
  'gmx.com',
  'gmx.de',
  'web.de',
  'mail.com',
  'yandex.com',
  'zoho.com',
  'qq.com',
  '163.com',
]);
