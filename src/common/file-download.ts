import { createHash } from 'node:crypto';
import { Field, ObjectType } from 'type-graphql';

/** The strong ETag of a file's bytes (quoted): SHA-256, base64url. */
export function strongEtag(bytes: Buffer): string {
  return `"${createHash('sha256').update(bytes).digest('base64url')}"`;
}

/**
 * A file answered through GraphQL (base64) that REST routes marked `file` send as raw bytes with
 * Content-Type, Content-Disposition and ETag, so both surfaces share one resolver.
 */
@ObjectType({ simpleResolvers: true, description: 'A generated file; REST sends the bytes themselves.' })
export class FileDownload {
  @Field()
  filename: string;

  @Field()
  contentType: string;

  @Field({ description: 'The file, base64-encoded.' })
  contentBase64: string;

  @Field({ description: 'Strong ETag of the bytes (quoted).' })
  etag: string;

  /** `etag` when it was computed before (a stored file's), else from the bytes. */
  constructor(filename: string, contentType: string, bytes: Buffer, etag = strongEtag(bytes)) {
    this.filename = filename;
    this.contentType = contentType;
    this.contentBase64 = bytes.toString('base64');
    this.etag = etag;
  }
}
