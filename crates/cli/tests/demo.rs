//! `rein --demo`: offline, no key, real tools.

use crate::support::{Env, run, stderr, stdout};

#[test]
fn the_demo_fixes_the_sample_project_offline() {
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
