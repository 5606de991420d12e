//! What building a provider costs at start-up, and what loading the system certificate store
//! would add if it were not deferred to the first certificate the bundled roots reject.

#![allow(
    clippy::unwrap_used,
    reason = "a benchmark whose setup fails should stop, loudly"
)]

use std::sync::Arc;

use divan::black_box;
use rein_llm::{ProviderConfig, ProviderKind, build_provider};

fn main() {
    divan::main();
}

/// The whole start-up path: crypto provider, bundled roots, reqwest client, provider.
#[divan::bench(args = [ProviderKind::OpenAi, ProviderKind::Anthropic])]
fn build_provider_default(kind: ProviderKind) {
    let config = ProviderConfig::new(kind);
    black_box(build_provider(black_box(&config)).unwrap());
}

/// The same with an extra CA file named (read and parsed at build time).
#[divan::bench]
fn build_provider_with_ca_file() {
    let mut config = ProviderConfig::new(ProviderKind::OpenAi);
    config.network.ca_file =
        Some(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ca.pem"));
    black_box(build_provider(black_box(&config)).unwrap());
}

/// Loading and parsing the system store, as reqwest's default rustls setup does while the
/// client is built; rein pays it only on first need, off the start-up path.
#[divan::bench(sample_count = 20)]
fn system_store_load_deferred_cost() {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    black_box(rustls_platform_verifier::Verifier::new(provider).is_ok());
}
