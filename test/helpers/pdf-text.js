#!/usr/bin/env node
/**
 * Extracts the text of a PDF with pdf-parse, for tests that read what a generated PDF shows:
 * `node pdf-text.js` reads the PDF on stdin and prints `{"text", "total", "pages": [text per page]}`
 * as JSON. A separate process because jest's module system cannot run pdf-parse (pdf.js starts
 * its worker through a dynamic import that jest refuses without --experimental-vm-modules).
 */
'use strict';
const { PDFParse } = require('pdf-parse');

async function main() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  const parser = new PDFParse({ data: new Uint8Array(Buffer.concat(chunks)) });
  try {
    const result = await parser.getText();
    const pages = result.pages.map((page) => page.text);
    process.stdout.write(JSON.stringify({ text: result.text, total: result.total, pages }));
  } finally {
    await parser.destroy();
  }
}

main().catch((error) => {
  process.stderr.write(`${error && error.stack ? error.stack : error}\n`);
  process.exit(1);
});
