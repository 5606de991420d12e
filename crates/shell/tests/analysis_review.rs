//! The security review of issue 9, deny side: bypasses of the hard deny list (the only brake
//! in yolo mode), each proven closed, and the near misses that must not be refused. Nothing here runs a command (a few cases plant a
//! symlink in a temporary directory for the analysis to look at).

use rein_shell::{CheckPlaces, analyze};

use crate::analysis::Verdict::{self, Asks, Denied, ReadOnly};
use crate::analysis::{places, verdict};

/// Finding 8: the hard deny list, which is the only brake in yolo mode.
const DENY: &[(&str, Verdict)] = &[
    // A program word known only when it runs.
    ("$SHELL -c 'rm -rf /'", Denied),
    ("${SHELL} -c 'rm -rf /'", Denied),
    ("$0 -c 'rm -rf /'", Denied),
    ("$BASH -c 'rm -rf ~'", Denied),
    ("\"$SHELL\" -c 'rm -rf /'", Denied),
    ("${R:-rm} -rf /", Denied),
    ("$R -rf /", Denied),
    ("`which rm` -rf /", Denied),
    ("$(which rm) -rf ~", Denied),
    ("$X -c 'rm -rf /'", Denied),
    // Arguments hidden in variables and positional parameters.
    ("a=\"-rf /\"; rm $a", Denied),
    ("a='-rf /'; rm $a", Denied),
    ("a=\"/*\"; rm -rf $a", Denied),
    ("mapfile -t a <<< /; rm -rf \"${a[@]}\"", Denied),
    ("readarray a < list; rm -rf \"${a[0]}\"", Denied),
    ("read -r d; rm -rf \"$d\"", Denied),
    ("read -r d; rm -rf \"$d\"/..", Denied),
    ("set -- /; rm -rf \"$1\"", Denied),
    ("set -- a /; rm -rf \"$@\"", Denied),
    ("set -- ~; rm -rf $*", Denied),
    // Moving or wiping home or the workspace.
    ("mv ~ /tmp/x", Denied),
    ("mv . /tmp/x", Denied),
    ("mv /* x", Denied),
    ("mv -t /tmp ~", Denied),
    ("mv /home/tester/proj /tmp/x", Denied),
    ("rsync -a --delete empty/ ~/", Denied),
    ("rsync -a --delete-after empty/ .", Denied),
    ("tar --remove-files -cf /dev/null ~", Denied),
    ("find ~ -delete", Denied),
    // Code in another language that runs a shell command.
    ("awk 'BEGIN{system(\"rm -rf /\")}'", Denied),
    ("perl -e 'system(\"rm -rf /\")'", Denied),
    ("perl -e '`rm -rf /`'", Denied),
    ("python3 -c 'import os; os.system(\"rm -rf /\")'", Denied),
    (
        "python3 -c 'import subprocess; subprocess.run([\"rm\", \"-rf\", \"/\"])'",
        Denied,
    ),
    ("ruby -e 'system(\"rm -rf ~\")'", Denied),
    ("ruby -r json -e 'system(\"rm -rf ~\")'", Denied),
    ("perl -pi -e 'system(\"rm -rf /\")' f", Denied),
    ("perl -MFile::Temp -e 'system(\"rm -rf /\")'", Denied),
    (
        "python3 -W ignore -c 'import os; os.system(\"rm -rf /\")'",
        Denied,
    ),
    ("php -r 'shell_exec(\"rm -rf /\");'", Denied),
    ("awk 'BEGIN{print \"rm -rf /\" | \"sh\"}'", Denied),
    ("git -C . -c core.pager='rm -rf /' log", Denied),
    (
        "node -e 'require(\"child_process\").execSync(\"rm -rf /\")'",
        Denied,
    ),
    // Protected places inside home and the workspace.
    ("rm -rf ~/.ssh", Denied),
    ("rm -rf ~/.gnupg", Denied),
    ("rm -rf ~/.config", Denied),
    ("rm -rf $HOME/.ssh/", Denied),
    ("rm -rf .git", Denied),
    ("rm -rf ./.git/", Denied),
    ("rm -rf /home/tester/proj/.git", Denied),
    // A symlink made in the same line, deleted through with a trailing slash.
    ("ln -s / x; rm -rf x/", Denied),
    ("ln -sf ~ h && rm -rf h/*", Denied),
];

/// What must not be refused (nor, where it was, stop being read-only).
const NEAR_MISSES: &[(&str, Verdict)] = &[
    ("git commit -m \"rm -rf /\"", Asks),
    ("echo 'rm -rf /'", ReadOnly),
    ("grep -r \"rm -rf\" .", ReadOnly),
    ("printf '%s\\n' 'rm -rf ~'", ReadOnly),
    ("python3 -c 'print(\"rm -rf /\")'", Asks),
    ("awk '{print \"rm -rf /\"}' x", ReadOnly),
    ("perl -e 'print \"rm -rf /\\n\"'", Asks),
    ("rm -rf ~/.cache/pip", Asks),
    ("rm -rf ~/.cache", Asks),
    ("rm -rf .gitignore", Asks),
    ("rm -rf build/.git", Asks),
    ("rm -rf /tmp/build.$$", Asks),
    ("rm -rf \"${BUILD_DIR:?}\"", Asks),
    ("rm -rf \"${BUILD_DIR:?}/out\"", Asks),
    ("a=\"build dist\"; rm -rf $a", Asks),
    ("mv build /tmp/old-build", Asks),
    ("mv ~/notes.txt ~/notes.bak", Asks),
    ("rsync -a --delete src/ /tmp/mirror/", Asks),
    ("rsync -a ~/ /backup/home/", Asks),
    ("tar -czf out.tgz ~/proj/src", Asks),
    ("$EDITOR notes.txt", Asks),
    ("$CC -o x x.c", Asks),
    ("python3 -m http.server 8000", Asks),
    (
        "python3 -c 'import subprocess; subprocess.run([\"ls\", \"-la\"])'",
        Asks,
    ),
    ("perl -pi -e 's/a/b/' f", Asks),
    ("d=\"my dir\"; cd \"$d\" && rm -rf build", Asks),
    ("rm -rf \"$(mktemp -d)/x\"", Asks),
    ("git clean -fdx", Asks),
    ("ln -s / x; rm -rf x", Asks),
    ("set -- a b; echo \"$1\"", ReadOnly),
];

fn check_table(name: &str, table: &[(&str, Verdict)]) {
    let wrong: Vec<String> = table
        .iter()
        .filter_map(|&(command, expected)| {
            let analysis = analyze(command, &places());
            let got = verdict(command, &places());
            (got != expected).then(|| {
                format!(
                    "{command:?}: {got:?}, expected {expected:?} (read_only: {:?}, danger: {:?})",
                    analysis.read_only, analysis.danger
                )
            })
        })
        .collect();
    assert!(wrong.is_empty(), "{name}:\n{}", wrong.join("\n"));
}

#[test]
fn the_deny_list_gaps_are_closed() {
    check_table("deny", DENY);
}

#[test]
fn near_misses_are_not_refused() {
    check_table("near misses", NEAR_MISSES);
}

#[test]
fn a_planted_symlink_to_a_protected_place_is_refused_with_a_trailing_slash() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let link = dir.path().join("x");
    std::os::unix::fs::symlink("/", &link).unwrap_or_else(|e| panic!("{e}"));
    std::os::unix::fs::symlink("/tmp", dir.path().join("t")).unwrap_or_else(|e| panic!("{e}"));
    std::fs::create_dir(dir.path().join("real")).unwrap_or_else(|e| panic!("{e}"));
    let here = CheckPlaces {
        cwd: Some(dir.path().to_owned()),
        ..places()
    };
    assert_eq!(verdict("rm -rf x/", &here), Denied);
    assert_eq!(verdict("rm -rf x/*", &here), Denied);
    assert_eq!(verdict("rm -rf ./x/.", &here), Denied);
    assert_eq!(verdict("rm -rf t/", &here), Denied);
    // Without the slash, rm deletes the link itself.
    assert_eq!(verdict("rm -rf x", &here), Asks);
    assert_eq!(verdict("rm -rf real/", &here), Asks);
}
