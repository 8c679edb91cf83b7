import type { Request, Response } from 'express';
import type { FileDownload } from '../common/file-download';

/**
 * A file's answer: the bytes, named for download, with a strong ETag (304 when the client has
 * them). Shared by the REST adapter's file routes and the web app's session downloads, so both
 * answer the same headers for the same file.
 */
export function sendFile(req: Request, res: Response, file: FileDownload): void {
  res.attachment(file.filename); // Content-Disposition, encoded as RFC 6266 asks
  res.set({ 'Content-Type': file.contentType, ETag: file.etag, 'Cache-Control': 'private, no-cache' });
  if (req.fresh) {
    res.status(304).end();
    return;
  }
  res.status(200).end(Buffer.from(file.contentBase64, 'base64'));
}
