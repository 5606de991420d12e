//! Context management, end to end against a mock model with a small window.

mod asked;
mod estimate;
mod failures;
mod long_session;
mod model;
mod outputs;
mod project;
mod records;
mod resume;
