//! Checkpoint speed on a 10,000-file tree: the first scan reads and stores every file; each
//! later turn (a scan before it and one after it, a few files changed between) must stay
//! well under 50 ms, since only files whose size, times, inode or mode changed are read.

#![expect(
    clippy::unwrap_used,
    reason = "benchmark setup: any failure should stop the run"
)]

use std::path::Path;
use std::time::{Duration, SystemTime};

use divan::Bencher;
use rein_core::checkpoint::{CheckpointSettings, Checkpoints};

fn main() {
    divan::main();
}

const DIRECTORIES: usize = 100;
const FILES_PER_DIRECTORY: usize = 100;

/// 10,000 files of about 1 KiB, dated an hour ago (not "racily" recent).
fn tree(root: &Path) {
    let old = SystemTime::now() - Duration::from_secs(3600);
    for d in 0..DIRECTORIES {
        let dir = root.join(format!("src/module{d:03}"));
        std::fs::create_dir_all(&dir).unwrap();
        for f in 0..FILES_PER_DIRECTORY {
            let path = dir.join(format!("file{f:03}.rs"));
            let line = format!("// module {d} file {f}\nfn f() {{ println!(\"{d}-{f}\"); }}\n");
            std::fs::write(&path, line.repeat(16)).unwrap();
            std::fs::File::options()
                .write(true)
                .open(&path)
                .unwrap()
                .set_modified(old)
                .unwrap();
        }
    }
    std::fs::write(root.join(".gitignore"), "target/\n").unwrap();
}

/// The first checkpoint of a session: every file read and stored.
#[divan::bench(sample_count = 3, sample_size = 1)]
fn first_checkpoint(bencher: Bencher) {
    bencher
        .with_inputs(|| {
            let home = tempfile::tempdir().unwrap();
            let work = tempfile::tempdir().unwrap();
            tree(work.path());
            (home, work)
        })
        .bench_local_values(|(home, work)| {
            let (mut checkpoints, _) = Checkpoints::open(
                home.path(),
                "20250101-000000-bench1",
                work.path(),
                CheckpointSettings::default(),
            );
            assert!(checkpoints.before_turn("first", 1).is_empty());
            (home, work)
        });
}

/// One later turn: the checkpoint before it and the record after it, with three files
/// changed by the turn.
#[divan::bench(sample_count = 20, sample_size = 1)]
fn later_turn(bencher: Bencher) {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    tree(work.path());
    let (mut checkpoints, _) = Checkpoints::open(
        home.path(),
        "20250101-000000-bench2",
        work.path(),
        CheckpointSettings::default(),
    );
    assert!(checkpoints.before_turn("first", 1).is_empty());
    assert!(checkpoints.after_turn().is_empty());
    let mut round = 0u32;
    bencher.bench_local(|| {
        round += 1;
        assert!(checkpoints.before_turn("again", 1).is_empty());
        for f in 0..3 {
            std::fs::write(
                work.path().join(format!("src/module00{f}/file000.rs")),
                format!("changed {round}\n"),
            )
            .unwrap();
        }
        assert!(checkpoints.after_turn().is_empty());
    });
}

/// The part of a later turn that adds to its wall time: the scan and record after the turn.
/// The checkpoint before a turn is taken while the first request is with the model, so it
/// delays nothing unless the model answers faster than the scan.
#[divan::bench(sample_count = 20, sample_size = 1)]
fn turn_end(bencher: Bencher) {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    tree(work.path());
    let (checkpoints, _) = Checkpoints::open(
        home.path(),
        "20250101-000000-bench3",
        work.path(),
        CheckpointSettings::default(),
    );
    let checkpoints = std::cell::RefCell::new(checkpoints);
    assert!(checkpoints.borrow_mut().before_turn("first", 1).is_empty());
    assert!(checkpoints.borrow_mut().after_turn().is_empty());
    let mut round = 0u32;
    bencher
        .with_inputs(|| {
            round += 1;
            assert!(checkpoints.borrow_mut().before_turn("again", 1).is_empty());
            for f in 0..3 {
                std::fs::write(
                    work.path().join(format!("src/module00{f}/file000.rs")),
                    format!("changed {round}\n"),
                )
                .unwrap();
            }
        })
        .bench_local_values(|()| assert!(checkpoints.borrow_mut().after_turn().is_empty()));
}
