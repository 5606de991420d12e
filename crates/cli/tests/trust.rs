//! `rein trust`: recording, listing and withdrawing the trust in a project.

use crate::support::{Env, run, stderr, stdout};

#[test]
fn a_project_is_trusted_listed_and_revoked() {
    let env = Env::new();
    std::fs::create_dir_all(env.work.join(".git")).unwrap();
    std::fs::create_dir_all(env.work.join("sub/dir")).unwrap();
    let mut cmd = env.rein();
    cmd.current_dir(env.work.join("sub/dir")).arg("trust");
    let out = run(&mut cmd);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("now trusted"), "{}", stderr(&out));

    let out = run(env.rein().args(["trust", "--list"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out).trim(),
        env.work.display().to_string(),
        "the project root, not the subdirectory"
    );
    assert!(
        std::fs::read_to_string(env.rein_home.join("trusted-projects"))
            .unwrap()
            .contains(&env.work.display().to_string())
    );

    let out = run(env.rein().args(["trust", "--revoke"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let out = run(env.rein().args(["trust", "--list"]));
    assert_eq!(stdout(&out).trim(), "");

    let out = run(env.rein().args(["trust", "/no/such/dir"]));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}
