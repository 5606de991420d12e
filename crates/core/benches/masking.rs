//! Masking secrets in 1 MB of command output: every form of each secret (base64 at three
//! alignments, hex, URL-encoding, reversed, separated characters), as the tool pipeline does
//! for each result and a background command's file for its output.
//!
//! The `large_*` benches: a 10 MB command output with twenty secrets in the environment and
//! every form of each (the value, base64, hex, URL-encoded, reversed, spaced) printed in it
//! twice, through the two paths such an output takes: the saved output file masked in
//! blocks (`redact_file`, foreground) or streamed to its file (background), and the whole
//! text masked at once (the result's text, when a tool returns it all).
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

/// Twenty secrets of the kinds an environment holds (tokens, keys, passwords, URLs).
fn twenty_secrets() -> Vec<(String, String)> {
    let kinds = [
        ("GITHUB_TOKEN", "ghp_"),
        ("OPENAI_API_KEY", "sk-proj-"),
        ("AWS_SECRET_ACCESS_KEY", "wJalrXUt/"),
        ("NPM_TOKEN", "npm_"),
        ("STRIPE_SECRET_KEY", "sk_live_"),
    ];
    (0..20)
        .map(|i| {
            let (name, prefix) = kinds[i % kinds.len()];
            let body: String = (0..32)
                .map(|j| char::from(b"abcdefghijklmnopqrstuvwxyz0123456789"[(i * 7 + j * 5) % 36]))
                .collect();
            (format!("APP{i}_{name}"), format!("{prefix}{body}"))
        })
        .collect()
}

static LARGE_SECRETS: LazyLock<Arc<Secrets>> = LazyLock::new(|| {
    let pairs = twenty_secrets();
    Arc::new(Secrets::gather(
        pairs.iter().map(|(n, v)| (n.as_str(), v.as_str())),
        &SecretValues::default(),
        None,
        &[],
    ))
});

const LARGE_OUTPUT_BYTES: usize = 10 * 1024 * 1024;

/// Each form of `value` a command may print: as it is, base64, hex, URL-encoded, reversed,
/// spaced out.
fn printed_forms(value: &str) -> Vec<String> {
    const B64: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let base64: String = value
        .as_bytes()
        .chunks(3)
        .flat_map(|c| {
            let n = c
                .iter()
                .enumerate()
                .fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
            (0..4).map(move |k| {
                if k <= c.len() {
                    char::from(B64[(n >> (18 - 6 * k) & 63) as usize])
                } else {
                    '='
                }
            })
        })
        .collect();
    let hex: String = value.bytes().map(|b| format!("{b:02x}")).collect();
    let url = value.replace('/', "%2F");
    let reversed: String = value.chars().rev().collect();
    let spaced: String = value.chars().map(|c| format!("{c} ")).collect();
    vec![value.to_owned(), base64, hex, url, reversed, spaced]
}

/// 10 MB of build-log-like lines with every form of every secret printed twice, spread out.
static LARGE_OUTPUT: LazyLock<String> = LazyLock::new(|| {
    let line = "   Compiling serde_json v1.0.140 (registry+https://github.com/rust-lang/crates.io-index) \
                src/lib.rs:42:7 warning: unused variable `s` 0x7ffd5e3a\n";
    let forms: Vec<String> = twenty_secrets()
        .iter()
        .flat_map(|(_, value)| printed_forms(value))
        .collect();
    let planted = forms.len() * 2;
    let mut out = String::with_capacity(LARGE_OUTPUT_BYTES + 4096);
    let mut next = 0;
    while out.len() < LARGE_OUTPUT_BYTES {
        out.push_str(line);
        if next < planted && out.len() >= next * (LARGE_OUTPUT_BYTES / planted) {
            out.push_str("export VALUE=");
            out.push_str(&forms[next % forms.len()]);
            out.push('\n');
            next += 1;
        }
    }
    out
});

fn main() {
    divan::main();
}

/// The saved output file of a 10 MB foreground command, masked in place.
#[divan::bench(sample_count = 10, sample_size = 1)]
fn large_redact_file_10mb(bencher: divan::Bencher) {
    let secrets = Arc::clone(&LARGE_SECRETS);
    let dir = tempfile::tempdir().ok();
    let path = dir.as_ref().map(|d| d.path().join("output.txt"));
    bencher
        .counter(divan::counter::BytesCount::new(LARGE_OUTPUT.len()))
        .with_inputs(|| {
            if let Some(path) = &path {
                let _ = std::fs::write(path, LARGE_OUTPUT.as_bytes());
            }
        })
        .bench_local_values(|()| {
            if let Some(path) = &path {
                let _ = secrets.redact_file(path);
            }
        });
    if let Some(path) = &path {
        let masked = std::fs::read_to_string(path).unwrap_or_default();
        assert_eq!(
            masked.matches("[REDACTED:").count(),
            240,
            "every planted form masked"
        );
    }
}

/// A 10 MB background command's output as it streams to its file in 64 KiB reads.
#[divan::bench(sample_count = 10, sample_size = 1)]
fn large_stream_10mb_in_64k_reads(bencher: divan::Bencher) {
    let secrets = Arc::clone(&LARGE_SECRETS);
    bencher
        .counter(divan::counter::BytesCount::new(LARGE_OUTPUT.len()))
        .bench(|| {
            let mut masker = ByteMasker::new(Arc::clone(&secrets));
            let mut out = Vec::with_capacity(LARGE_OUTPUT.len());
            for piece in LARGE_OUTPUT.as_bytes().chunks(64 * 1024) {
                masker.push(piece, &mut out);
            }
            masker.finish(&mut out);
            out.len()
        });
}

/// The whole 10 MB text masked at once.
#[divan::bench(sample_count = 10, sample_size = 1)]
fn large_redact_10mb(bencher: divan::Bencher) {
    let secrets = Arc::clone(&LARGE_SECRETS);
    let masked = secrets.redact(&LARGE_OUTPUT);
    assert_eq!(
        masked.matches("[REDACTED:").count(),
        240,
        "every planted form masked"
    );
    bencher
        .counter(divan::counter::BytesCount::new(LARGE_OUTPUT.len()))
        .bench(|| secrets.redact(divan::black_box(&LARGE_OUTPUT)).len());
}

/// Building the matcher for twenty secrets (once per run).
#[divan::bench]
fn large_gather_20() -> Secrets {
    let pairs = twenty_secrets();
    Secrets::gather(
        pairs.iter().map(|(n, v)| (n.as_str(), v.as_str())),
        &SecretValues::default(),
        None,
        &[],
    )
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
