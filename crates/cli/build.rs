//! Links the `rein` binary: at a fixed address, and with the code a run executes packed
//! together.
//!
//! A position-independent `rein` spends its first moments relocating about 26,000 pointers,
//! which copies some 460 KB of read-only data into private memory before `main` runs. Linked
//! at a fixed address, it starts 0.7 ms sooner (about a quarter of the time to its first
//! request) and uses 0.5 MB less memory (bench/agent.py). The cost is that the executable's
//! own code is not randomised in memory (libraries, heap and stack still are); Go builds
//! its Linux binaries this way by default, and a command-line program written in safe Rust
//! is a poor target for the attacks that randomisation slows down.
//!
//! The kernel maps a binary's code a page-cache folio (64 KB or more) at a time, so code
//! executed in a few places all over a 26 MB `.text` kept 14 MB of it resident. The release
//! build hands the linker `link-order.txt` (made by bench/link_order.py), which places the
//! functions a run executes side by side, about 4 MB: peak RSS falls by half. A name the
//! linker does not find is skipped, so an outdated list costs only the gain; the names carry
//! the compiler's hashes, so another Rust version than the list was made with loses all of
//! it until the list is made again.
fn main() {
    let env = |name: &str| std::env::var(name).unwrap_or_default();
    if env("CARGO_CFG_TARGET_OS") != "linux" {
        return;
    }
    println!("cargo:rustc-link-arg-bin=rein=-no-pie");
    println!("cargo:rerun-if-changed=link-order.txt");
    // The list is in the release build's symbol names. Rust links x86_64 Linux with its own
    // lld, which reads the list; another linker might not (GNU ld does not), whether chosen
    // in cargo's configuration (`linker`, which cargo gives here as RUSTC_LINKER) or RUSTFLAGS.
    let own_linker =
        env("RUSTC_LINKER").is_empty() && !env("CARGO_ENCODED_RUSTFLAGS").contains("link");
    let list = format!("{}/link-order.txt", env("CARGO_MANIFEST_DIR"));
    let release = env("PROFILE") == "release";
    let lld = env("TARGET") == "x86_64-unknown-linux-gnu" && own_linker;
    if release && lld && std::path::Path::new(&list).exists() {
        println!("cargo:rustc-link-arg-bin=rein=-Wl,--symbol-ordering-file={list}");
        println!("cargo:rustc-link-arg-bin=rein=-Wl,--no-warn-symbol-ordering");
    }
}
