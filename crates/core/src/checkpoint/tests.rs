//! A store that cannot be written: a warning, the turn goes on, and nothing that was not
//! saved is offered as restorable.

use sha2::{Digest, Sha256};

use super::*;

fn open(home: &Path, work: &Path) -> Checkpoints {
    let (checkpoints, warnings) = Checkpoints::open(
        home,
        "20250101-000000-test01",
        work,
        CheckpointSettings::default(),
    );
    assert!(warnings.is_empty(), "{warnings:?}");
    checkpoints
}

#[test]
fn a_store_that_cannot_be_written_is_a_warning_and_no_turn_is_claimed() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("a.txt"), "a").unwrap();
    let mut checkpoints = open(home.path(), work.path());
    // Where the objects go is a file: nothing can be saved (as on a full disk).
    std::fs::write(home.path().join("checkpoints/objects"), "").unwrap();
    let warnings = checkpoints.before_turn("change a", 1);
    assert!(
        warnings[0].contains("no checkpoint for this turn"),
        "{warnings:?}"
    );
    assert!(checkpoints.after_turn().is_empty());
    assert!(checkpoints.turns().unwrap().is_empty());
}

#[test]
fn a_file_whose_copy_failed_is_named_as_not_restorable() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("kept.txt"), "kept").unwrap();
    std::fs::write(work.path().join("lost.txt"), "lost").unwrap();
    let mut checkpoints = open(home.path(), work.path());
    // The directory of lost.txt's object is taken by a file: that one copy fails.
    let hash: String = Sha256::digest(b"lost")
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let objects = home.path().join("checkpoints/objects");
    std::fs::create_dir_all(&objects).unwrap();
    std::fs::write(objects.join(&hash[..2]), "").unwrap();
    let warnings = checkpoints.before_turn("change both", 1);
    assert!(
        warnings[0].contains("could not save 1 file(s) (first: lost.txt"),
        "{warnings:?}"
    );
    std::fs::write(work.path().join("kept.txt"), "changed").unwrap();
    std::fs::write(work.path().join("lost.txt"), "changed too").unwrap();
    assert!(checkpoints.after_turn().is_empty());
    let plan = checkpoints.plan(1, RewindScope::Code).unwrap();
    let restored: Vec<&str> = plan.restores.iter().map(|r| r.path.as_str()).collect();
    assert_eq!(restored, ["kept.txt"]);
    assert_eq!(plan.unsaved.len(), 1);
    assert_eq!(plan.unsaved[0].path, "lost.txt");
    assert!(plan.unsaved[0].reason.contains("could not be saved"));
    checkpoints.apply(&plan, OnChanged::Refuse, None).unwrap();
    assert_eq!(
        std::fs::read_to_string(work.path().join("kept.txt")).unwrap(),
        "kept"
    );
    assert_eq!(
        std::fs::read_to_string(work.path().join("lost.txt")).unwrap(),
        "changed too"
    );
}

#[test]
fn a_journal_a_killed_rein_was_writing_is_removed_and_a_live_ones_kept() {
    let home = tempfile::tempdir().unwrap();
    let journals = home.path().join("checkpoints").join("journals");
    std::fs::create_dir_all(&journals).unwrap();
    let dead = journals.join(format!("{}abc123", restore::PARTIAL_JOURNAL_PREFIX));
    std::fs::write(&dead, "{\"sess").unwrap();
    let live = journals.join(format!("{}def456", restore::PARTIAL_JOURNAL_PREFIX));
    std::fs::write(&live, "{\"sess").unwrap();
    let held = std::fs::File::open(&live).unwrap();
    held.lock().unwrap();

    let notes = recover(home.path());

    assert!(notes.is_empty(), "{notes:?}");
    assert!(!dead.exists(), "the dead rein's partial journal stayed");
    assert!(live.exists(), "a live rewind's partial journal was removed");
}
