//! Whole-binary tests: the real `rein` in temp directories, rein-testkit as the model.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "test code")]

mod support;

mod big_output;
mod demo;
mod env;
mod fix_import;
mod headless;
mod interrupt;
mod orphans;
mod parallel;
mod rounds;
mod sessions;
