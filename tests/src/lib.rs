//! End-to-end test fixtures.
