//! rein-shell integration tests: one binary, one module per feature.

mod analysis;
mod analysis_review;
mod analysis_rules;
mod dangerous;
mod props;
