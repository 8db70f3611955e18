/** One progress line on stderr while a workload runs (rewritten in place on a terminal). */
const tty = process.stderr.isTTY === true;
let last = '';

export function progress(text: string): void {
  if (text === last) return;
  last = text;
  if (tty) process.stderr.write(`\r\x1b[2K${text}`);
  else process.stderr.write(`${text}\n`);
}

/** Ends the current progress line so that the next output starts on a fresh line. */
export function progressDone(text?: string): void {
  if (text) progress(text);
  if (tty && last !== '') process.stderr.write('\n');
  last = '';
}
