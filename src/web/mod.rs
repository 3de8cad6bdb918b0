//! Browser shell.
