/**
 * A failure the caller caused or can act on. Its message goes back to the model as an MCP tool
 * result with `isError: true`, so it must say what happened and what to do — and must never
 * carry a host path: messages name paths only as `root:relative/path`.
 */
export class ToolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ToolError';
  }
}

const MAX_SHOWN = 200;

/** A path as messages show it: `workspace:notes/a.txt`, `workspace:.` for the root itself. */
export function showPath(rootName: string, rel: string): string {
  const shown = `${rootName}:${rel === '' ? '.' : rel}`;
  return shown.length > MAX_SHOWN ? `${shown.slice(0, MAX_SHOWN)}…` : shown;
}

/**
 * Turns a Node filesystem error into a ToolError about `shown`. Node's own message is never used:
 * it embeds the absolute host path.
 */
export function fsError(error: unknown, shown: string, action: string): ToolError {
  if (error instanceof ToolError) return error;
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  switch (code) {
    case 'ENOENT':
      return new ToolError(`${shown} not found`);
    case 'ENOTDIR':
      return new ToolError(`${shown} not found (a part of the path is a file, not a folder)`);
    case 'EISDIR':
      return new ToolError(`${shown} is a directory`);
    case 'EEXIST':
      return new ToolError(`${shown} already exists`);
    case 'ENOTEMPTY':
      return new ToolError(`${shown} is a folder that is not empty`);
    case 'EACCES':
    case 'EPERM':
      return new ToolError(`permission denied: cannot ${action} ${shown}`);
    case 'ELOOP':
      return new ToolError(`${shown} goes through a symbolic link loop`);
    case 'ENAMETOOLONG':
      return new ToolError(`a name in ${shown} is too long for the filesystem`);
    case 'ENOSPC':
    case 'EDQUOT':
      return new ToolError(`no space left to ${action} ${shown}`);
    case 'EROFS':
      return new ToolError(`cannot ${action} ${shown}: the filesystem is read-only`);
    case 'EBUSY':
    case 'EMFILE':
    case 'ENFILE':
    case 'EAGAIN':
      return new ToolError(`cannot ${action} ${shown} right now (${code}); try again`);
    default:
      return new ToolError(`cannot ${action} ${shown}${code ? ` (${code})` : ''}`);
  }
}
