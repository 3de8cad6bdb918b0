// Types of the package's share entry (share.js, share.cjs): everything of the main entry. Importing it,
// anywhere in an app, is what makes the `share` option work (see Options.share).
export * from './index.js';
