//! Population simulator (see issue 5).
