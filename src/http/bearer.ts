/** The token an Authorization header carries (`Bearer <token>`, any case, spaces around it), or undefined. */
export function bearerToken(authorization: string | undefined): string | undefined {
  return authorization === undefined ? undefined : /^Bearer\s+(\S+)\s*$/i.exec(authorization)?.[1];
}
