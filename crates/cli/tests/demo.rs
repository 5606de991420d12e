//! `rein --demo`: offline, no key, real tools.

use crate::support::{Env, require_python3, run, stderr, stdout};

#[test]
fn the_demo_fixes_the_sample_project_offline() {
    require_python3();
    let env = Env::new();
    // No key, no base URL: the demo needs neither.
    let out = run(env.rein().arg("--demo"));
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let progress = stderr(&out);
    for step in [
        "read_file main.py",
        "edit_file main.py",
        "+from utils import greet, shout",
        "bash python3 main.py",
        "Hello, rein!",
    ] {
        assert!(progress.contains(step), "{step} missing from:\n{progress}");
    }
    assert!(stdout(&out).contains("Fixed"));
    assert!(!progress.contains("warning"), "{progress}");
    // The project it worked on, named in its output, really is fixed.
    let dir = progress
        .split_whitespace()
        .find(|w| w.contains("rein-demo-"))
        .map(|w| w.trim_end_matches([';', ',', ')', '.']))
        .unwrap();
    let main_py = std::fs::read_to_string(std::path::Path::new(dir).join("main.py")).unwrap();
    assert!(main_py.contains("from utils import greet, shout"));
    let run_it = std::process::Command::new("python3")
        .arg("main.py")
        .current_dir(dir)
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&run_it.stdout),
        "Hello, rein!\nTHE IMPORT WORKS!\n"
    );
}

#[test]
fn without_python3_the_demo_says_what_it_needs_instead_of_pretending() {
    let env = Env::new();
    let empty = env.home.join("empty-bin");
    std::fs::create_dir_all(&empty).unwrap();
    let out = run(env.rein().env("PATH", &empty).arg("--demo"));
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("needs python3") && err.contains("Install Python 3"),
        "{err}"
    );
    assert!(!err.contains("Hello, rein!"), "no replayed claims: {err}");
    assert!(stdout(&out).is_empty(), "{}", stdout(&out));
}
