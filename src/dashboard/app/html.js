// htm bound to Preact, for the pages not yet written in TSX (each page moves to pages/*.tsx; this
// file goes with the last of them). Interpolated strings become text nodes, never parsed as HTML.
import { h } from 'preact';
import htm from 'htm';

export const html = htm.bind(h);
export * from './format.ts';
