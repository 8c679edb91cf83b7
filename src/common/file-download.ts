import { createHash } from 'node:crypto';
import { Field, ObjectType } from 'type-graphql';

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

  constructor(filename: string, contentType: string, bytes: Buffer) {
    this.filename = filename;
    this.contentType = contentType;
    this.contentBase64 = bytes.toString('base64');
    this.etag = `"${createHash('sha256').update(bytes).digest('base64url')}"`;
  }
}
