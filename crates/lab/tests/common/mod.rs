//! Helpers shared by the lab's integration tests.

/// Skips a test whose server is missing, or fails it under CI.
pub use dbdelta_model::testing::require;
