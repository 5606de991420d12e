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

fn write(work: &Path, name: &str, content: &str) {
    std::fs::write(work.join(name), content).unwrap();
}

fn changed_paths(turn: &TurnRecord) -> Vec<&str> {
    turn.changes
        .iter()
        .flatten()
        .map(|c| c.path.as_str())
        .collect()
}

fn saved_tree(checkpoints: &Checkpoints) -> Tree {
    SavedTree::read(&checkpoints.dir()).unwrap().0
}

#[test]
fn a_turn_cut_short_after_several_turns_is_finished_from_the_saved_snapshot() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    for name in ["a.txt", "b.txt", "c.txt"] {
        write(work.path(), name, name);
    }
    let mut checkpoints = open(home.path(), work.path());
    assert!(checkpoints.before_turn("one", 1).is_empty());
    write(work.path(), "a.txt", "a, changed by turn one");
    assert!(checkpoints.after_turn().is_empty());
    // By hand between turns: no turn's change.
    write(work.path(), "b.txt", "b, changed by hand");
    assert!(checkpoints.before_turn("two", 2).is_empty());
    std::fs::remove_file(work.path().join("c.txt")).unwrap();
    write(work.path(), "d.txt", "d");
    assert!(checkpoints.after_turn().is_empty());
    assert!(checkpoints.before_turn("three", 3).is_empty());
    // Later scans were appended, not the whole snapshot rewritten.
    assert!(checkpoints.dir().join("tree-changes.jsonl").exists());
    write(work.path(), "d.txt", "d, changed by turn three");
    // rein is killed here: turn three is never recorded by this process.
    drop(checkpoints);

    let checkpoints = open(home.path(), work.path());
    let turns = checkpoints.turns().unwrap();
    assert_eq!(turns.len(), 3);
    assert_eq!(changed_paths(&turns[0]), ["a.txt"]);
    assert_eq!(changed_paths(&turns[1]), ["c.txt", "d.txt"]);
    assert_eq!(changed_paths(&turns[2]), ["d.txt"]);
}

#[test]
fn the_saved_snapshot_reads_back_as_the_one_in_memory_even_after_a_cut_off_line() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    for f in 0..300 {
        write(work.path(), &format!("f{f:03}.txt"), "first");
    }
    let mut checkpoints = open(home.path(), work.path());
    assert!(checkpoints.before_turn("first", 1).is_empty());
    assert!(checkpoints.after_turn().is_empty());
    let changes = checkpoints.dir().join("tree-changes.jsonl");
    let mut folded = false;
    for round in 0..12 {
        assert!(checkpoints.before_turn("again", 1).is_empty());
        // Every file changed: each scan's line is large, so the lines are soon folded.
        for f in 0..300 {
            write(work.path(), &format!("f{f:03}.txt"), &"x".repeat(round + 2));
        }
        if round == 1 {
            // What a rein killed while appending leaves: a line without its end.
            let mut file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&changes)
                .unwrap();
            std::io::Write::write_all(&mut file, b"{\"taken\":1,\"files\":{\"f0").unwrap();
        }
        assert!(checkpoints.after_turn().is_empty());
        assert_eq!(
            &saved_tree(&checkpoints),
            checkpoints.tree.as_ref().unwrap()
        );
        folded |= !changes.exists();
    }
    assert!(folded, "the lines were never folded into tree.json");
}

#[test]
fn lines_already_folded_into_the_whole_snapshot_read_again_change_nothing() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    write(work.path(), "a.txt", "a");
    let mut checkpoints = open(home.path(), work.path());
    assert!(checkpoints.before_turn("one", 1).is_empty());
    write(work.path(), "a.txt", "a, changed");
    write(work.path(), "b.txt", "b");
    assert!(checkpoints.after_turn().is_empty());
    assert!(checkpoints.before_turn("two", 2).is_empty());
    std::fs::remove_file(work.path().join("b.txt")).unwrap();
    assert!(checkpoints.after_turn().is_empty());
    let changes = checkpoints.dir().join("tree-changes.jsonl");
    let lines = std::fs::read(&changes).unwrap();
    // Folded, then killed before the folded lines were removed.
    let tree = checkpoints.tree.clone().unwrap();
    saved::write_whole(&checkpoints.dir(), &tree).unwrap();
    std::fs::write(&changes, lines).unwrap();
    assert_eq!(saved_tree(&checkpoints), tree);
}

#[test]
fn a_rewind_removes_the_directories_the_turns_created_once_empty_and_no_other() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let w = work.path();
    let mkdir = |dir: &str| std::fs::create_dir_all(w.join(dir)).unwrap();
    mkdir("kept-empty");
    mkdir("old");
    write(w, "old/file.txt", "old");
    let mut checkpoints = open(home.path(), w);
    assert!(checkpoints.before_turn("one", 1).is_empty());
    mkdir("a/b");
    write(w, "a/b/c.txt", "new");
    write(w, "kept-empty/new.txt", "new");
    mkdir("made/empty");
    mkdir("old/x");
    write(w, "old/x/y.txt", "new");
    mkdir("busy/z");
    write(w, "busy/z/by-turn.txt", "new");
    assert!(checkpoints.after_turn().is_empty());
    drop(checkpoints);
    // The next turn in another process: the directories come from the saved snapshot.
    let mut checkpoints = open(home.path(), w);
    assert!(checkpoints.before_turn("two", 2).is_empty());
    mkdir("two/deep");
    write(w, "two/deep/t.txt", "two");
    assert!(checkpoints.after_turn().is_empty());
    let turns = checkpoints.turns().unwrap();
    assert_eq!(
        turns[0].created_dirs,
        ["a", "a/b", "busy", "busy/z", "made", "made/empty", "old/x"]
    );
    assert_eq!(turns[1].created_dirs, ["two", "two/deep"]);
    // Someone else's file in a directory the turn made: that one stays.
    write(w, "busy/z/mine.txt", "mine");
    drop(checkpoints);

    let mut checkpoints = open(home.path(), w);
    let plan = checkpoints.plan(1, RewindScope::Code).unwrap();
    let applied = checkpoints.apply(&plan, OnChanged::Refuse, None).unwrap();

    // Deepest first, and only those left empty.
    assert_eq!(
        applied.removed_dirs,
        ["two/deep", "two", "old/x", "made/empty", "made", "a/b", "a"]
    );
    for gone in ["a", "made", "old/x", "two", "busy/z/by-turn.txt"] {
        assert!(!w.join(gone).exists(), "{gone} is still there");
    }
    for kept in ["kept-empty", "old/file.txt", "busy/z/mine.txt"] {
        assert!(w.join(kept).exists(), "{kept} was removed");
    }
    assert!(!w.join("kept-empty/new.txt").exists());
}

#[test]
fn a_snapshot_saved_without_directories_reports_none_created() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let w = work.path();
    std::fs::create_dir_all(w.join("before")).unwrap();
    let mut checkpoints = open(home.path(), w);
    assert!(checkpoints.before_turn("one", 1).is_empty());
    let dir = checkpoints.dir();
    // rein stops during the turn, and the snapshot is as an earlier rein saved it: no
    // `dirs`.
    drop(checkpoints);
    std::fs::create_dir_all(w.join("during")).unwrap();
    let mut tree = saved_tree_at(&dir);
    assert!(tree.dirs.as_ref().unwrap().contains("before"));
    tree.dirs = None;
    saved::write_whole(&dir, &tree).unwrap();

    // The next start finishes the turn: which directories are new is not known, so none
    // is taken for the turn's (a rewind would remove it).
    let checkpoints = open(home.path(), w);
    let turns = checkpoints.turns().unwrap();
    assert!(turns[0].changes.is_some());
    assert!(
        turns[0].created_dirs.is_empty(),
        "{:?}",
        turns[0].created_dirs
    );
    let dirs = saved_tree_at(&dir).dirs.unwrap();
    assert!(
        dirs.contains("before") && dirs.contains("during"),
        "{dirs:?}"
    );
}

fn saved_tree_at(dir: &Path) -> Tree {
    SavedTree::read(dir).unwrap().0
}
