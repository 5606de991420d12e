//! Masking secrets in 1 MB of command output: every form of each secret (base64 at three
//! alignments, hex, URL-encoding, reversed, separated characters), as the tool pipeline does
//! for each result and a background command's file for its output.
//!
//! Run: `cargo bench -p rein-core --bench masking`

use std::sync::{Arc, LazyLock};

use rein_core::secrets::{ByteMasker, SecretValues, Secrets};

const OUTPUT_BYTES: usize = 1024 * 1024;

/// A typical environment: a few keys and tokens.
static SECRETS: LazyLock<Arc<Secrets>> = LazyLock::new(|| {
    Arc::new(Secrets::gather(
        [
            ("GITHUB_TOKEN", "ghp_0123456789abcdefghijklmnopqrstuvwx"),
            (
                "AWS_SECRET_ACCESS_KEY",
                "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            ),
            ("NPM_TOKEN", "npm_abcdefghijklmnopqrstuvwxyz0123456789"),
            ("DATABASE_PASSWORD", "correct horse battery staple"),
            ("STRIPE_SECRET_KEY", "sk_live_51H8abcdefghijklmnopqrstuv"),
        ],
        &SecretValues::default(),
        Some((
            "OPENAI_API_KEY",
            "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD",
        )),
        &[],
    ))
});

/// Build-log-like text (no secret in it: the common case).
static OUTPUT: LazyLock<String> = LazyLock::new(|| {
    let line = "   Compiling serde_json v1.0.140 (registry+https://github.com/rust-lang/crates.io-index) \
                src/lib.rs:42:7 warning: unused variable `s` 0x7ffd5e3a\n";
    line.repeat(OUTPUT_BYTES / line.len() + 1)[..OUTPUT_BYTES].to_owned()
});

fn main() {
    divan::main();
}

/// One whole result (the foreground path).
#[divan::bench]
fn redact_1mb(bencher: divan::Bencher) {
    let secrets = Arc::clone(&SECRETS);
    bencher
        .counter(divan::counter::BytesCount::new(OUTPUT_BYTES))
        .bench(|| secrets.redact(divan::black_box(&OUTPUT)).len());
}

/// The same output as it streams to a file, in the pipe's 64 KiB reads.
#[divan::bench]
fn stream_1mb_in_64k_reads(bencher: divan::Bencher) {
    let secrets = Arc::clone(&SECRETS);
    bencher
        .counter(divan::counter::BytesCount::new(OUTPUT_BYTES))
        .bench(|| {
            let mut masker = ByteMasker::new(Arc::clone(&secrets));
            let mut out = Vec::with_capacity(OUTPUT_BYTES);
            for piece in OUTPUT.as_bytes().chunks(64 * 1024) {
                masker.push(piece, &mut out);
            }
            masker.finish(&mut out);
            out.len()
        });
}

/// Building the matcher for those secrets (once per run).
#[divan::bench]
fn gather() -> Secrets {
    Secrets::gather(
        [("GITHUB_TOKEN", "ghp_0123456789abcdefghijklmnopqrstuvwx")],
        &SecretValues::default(),
        Some((
            "OPENAI_API_KEY",
            "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD",
        )),
        &[],
    )
}
