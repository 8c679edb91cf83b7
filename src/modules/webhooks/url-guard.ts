import { ValidateBy } from 'class-validator';

/**
 * What every webhook URL looks like before it is parsed: http(s), an authority without
 * credentials (no `@`), then a path, query or fragment. The OpenAPI document shows it beside
 * `format: uri` (IsWebhookUrl below).
 */
export const WEBHOOK_URL_SHAPE = /^[hH][tT][tT][pP][sS]?:\/\/[^\s/?#@]+(?:[/?#]\S*)?$/;

/** Problems with the URL itself, before any lookup: null when it is a usable http(s) URL. */
export function webhookUrlProblem(text: string): string | null {
  if (!WEBHOOK_URL_SHAPE.test(text)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(text) && !/^https?:/i.test(text)) return 'url must use http or https';
    if (/^https?:\/\/[^/?#]*@/i.test(text)) return 'url must not contain credentials; use the signature to authenticate deliveries';
    return 'url must be an absolute http or https URL';
  }
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'url must be an absolute http or https URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'url must use http or https';
  if (url.username || url.password) return 'url must not contain credentials; use the signature to authenticate deliveries';
  if (text.length > 2048) return 'url must be at most 2048 characters';
  return null;
}

/** A webhook URL (webhookUrlProblem): refused with its problem as the message. */
export function IsWebhookUrl(): PropertyDecorator {
  return ValidateBy({
    name: 'isWebhookUrl',
    validator: {
      validate: (value: unknown) => typeof value === 'string' && webhookUrlProblem(value) === null,
      defaultMessage: (args) => (typeof args?.value === 'string' && webhookUrlProblem(args.value)) || 'url must be an absolute http or https URL',
    },
  });
}
