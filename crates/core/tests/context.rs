//! Context management, end to end against the mock model with a small window.

mod estimate;
