//! What the world writes to `summary.csv`: its catalogue entries.
