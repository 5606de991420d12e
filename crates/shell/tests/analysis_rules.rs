//! The security review of issue 9, rules side: the text deny/ask/allow rules are matched
//! against (`rule_text`), the globs file rules expand, and commands that read files no rule
//! has seen or run programs rein has not checked, which must ask. Nothing here runs a
//! command.

use rein_shell::analyze;

use crate::analysis::Verdict::{self, Asks, ReadOnly};
use crate::analysis::{places, verdict};

/// Finding 2: git that could run a program configured somewhere rein does not see.
const GIT: &[(&str, Verdict)] = &[
    ("git -C . status", Asks),
    ("git -C ../other log", Asks),
    ("git --git-dir=x/.git log", Asks),
    ("git --git-dir x/.git log", Asks),
    ("git --work-tree=. diff", Asks),
    ("git --bare log", Asks),
    ("git -c core.pager=less log", Asks),
    ("git --config-env=core.pager=P log", Asks),
    ("git --exec-path=/tmp log", Asks),
    ("git --namespace=x log", Asks),
    ("GIT_DIR=x git log", Asks),
    ("GIT_WORK_TREE=. git status", Asks),
    ("GIT_CONFIG_GLOBAL=x git log", Asks),
    ("GIT_EXTERNAL_DIFF=x git diff", Asks),
    ("PAGER=x git log", Asks),
    ("GIT_PAGER=x git log", Asks),
    ("LESSOPEN='|x %s' git log", Asks),
    ("env GIT_DIR=x git log", Asks),
    ("git log -p --textconv", Asks),
    ("git diff --ext-diff", Asks),
    ("git log --show-signature", Asks),
    ("git show --show-signature HEAD", Asks),
    ("git cat-file --filters HEAD:a", Asks),
    ("git cat-file --textconv HEAD:a", Asks),
    ("git grep --textconv x", Asks),
    ("git remote show origin", Asks),
    ("git fetch", Asks),
    ("git ls-remote origin", Asks),
    // Still read-only.
    ("git log -G foo --oneline", ReadOnly),
    ("git --no-pager log -5", ReadOnly),
    ("git -P diff --stat", ReadOnly),
    ("git remote -v", ReadOnly),
    ("git cat-file -p HEAD", ReadOnly),
    ("git diff --no-textconv", ReadOnly),
];

/// Finding 4: programs that read files the rules cannot see, or run other programs.
const FILTERS: &[(&str, Verdict)] = &[
    ("find . -name '.e*' | xargs cat", Asks),
    ("ls | xargs wc -l", Asks),
    ("echo a | xargs", Asks),
    ("sed -n 'r /etc/shadow' x", Asks),
    ("sed '1R .env' x", Asks),
    ("sed -n 'w out' x", Asks),
    ("sed 's/a/b/w out' x", Asks),
    ("sed 's/a/b/e' x", Asks),
    ("sed -n '1e date' x", Asks),
    ("rg --pre cat x", Asks),
    ("rg --pre-glob '*.gz' x", Asks),
    ("sort -o out x", Asks),
    ("find . -fprint out", Asks),
    ("find . -fprintf out %p", Asks),
    ("find . -fls out", Asks),
    ("awk 'BEGIN{system(\"ls\")}'", Asks),
    ("awk '{print > \"out\"}' x", Asks),
    ("awk '{print | \"sh\"}' x", Asks),
    // Still read-only.
    ("sed -n '1,5p' x", ReadOnly),
    ("sed 's/a/b/g' x", ReadOnly),
    ("rg -n foo src", ReadOnly),
    ("cat src/*.rs", ReadOnly),
    ("awk '{print $1}' x", ReadOnly),
    ("cd \"$X\" && cat .env", Asks),
    ("cd src && cat .env", ReadOnly),
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
fn git_that_runs_configured_programs_is_not_read_only() {
    check_table("git", GIT);
}

#[test]
fn filters_that_read_unseen_files_or_run_programs_ask() {
    check_table("filters", FILTERS);
}

/// The text deny, ask and allow rules are matched against: `(command, rule_text)`.
const RULE_TEXTS: &[(&str, Option<&str>)] = &[
    ("git push", Some("git push")),
    ("git \"push\"", Some("git push")),
    ("\\git push", Some("git push")),
    ("command git push", Some("git push")),
    ("builtin echo hi", Some("echo hi")),
    ("exec git push", Some("git push")),
    ("env git push", Some("git push")),
    ("env -i FOO=1 git push", Some("git push")),
    ("timeout 5 git push", Some("git push")),
    ("timeout -s KILL 5 git push", Some("git push")),
    ("nice -n 5 git push", Some("git push")),
    ("nohup git push", Some("git push")),
    ("stdbuf -oL git push", Some("git push")),
    ("time git push", Some("git push")),
    ("sudo -u root git push", Some("git push")),
    ("doas git push", Some("git push")),
    ("FOO=1 git push", Some("git push")),
    ("git -C . push", Some("git push")),
    ("git -C . push --force", Some("git push --force")),
    ("git -c a.b=c --no-pager push", Some("git push")),
    ("git --git-dir=.git --work-tree=. push", Some("git push")),
    ("git --git-dir .git -P push origin", Some("git push origin")),
    ("git --namespace x --bare push", Some("git push")),
    ("git --exec-path=/x --config-env=a=B push", Some("git push")),
    ("/usr/bin/git push", Some("git push")),
    ("./node_modules/.bin/jest -w", Some("jest -w")),
    ("G=git; $G push", Some("git push")),
    ("O=-C; git $O . push", Some("git push")),
    ("A=\"-C .\"; git $A push", Some("git push")),
    ("git $X push", None),
    ("git -C \"$D\" push", Some("git push")),
    ("npm   test  --  --watch", Some("npm test -- --watch")),
    ("npm test 'a  b'", Some("npm test a  b")),
    ("ls > out.txt 2>&1", Some("ls")),
    ("$CMD push", None),
    ("$(which git) push", None),
    ("g* push", None),
];

#[test]
fn rule_text_is_the_command_as_rules_see_it() {
    let mut wrong = Vec::new();
    for &(command, expected) in RULE_TEXTS {
        let analysis = analyze(command, &places());
        let got = analysis
            .simple_commands
            .last()
            .and_then(|c| c.rule_text.clone());
        if got.as_deref() != expected {
            wrong.push(format!("{command:?}: {got:?}, expected {expected:?}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn nested_commands_have_their_own_rule_text() {
    let analysis = analyze(
        "bash -c 'command git push' && sh -c \"git -C x push\"",
        &places(),
    );
    let texts: Vec<Option<&str>> = analysis
        .simple_commands
        .iter()
        .map(|c| c.rule_text.as_deref())
        .collect();
    assert_eq!(
        texts,
        [
            Some("bash -c command git push"),
            Some("git push"),
            Some("sh -c git -C x push"),
            Some("git push"),
        ]
    );
}

/// `(command, [(argv index, pattern)])`.
const GLOBS: &[(&str, &[(usize, &str)])] = &[
    ("cat .e*", &[(1, ".e*")]),
    ("cat src/*.rs", &[(1, "src/*.rs")]),
    ("cat 'my dir'/*.rs", &[(1, "my dir/*.rs")]),
    ("cat '*'x*", &[(1, "\\*x*")]),
    ("cat \"a[1]\"?", &[(1, "a\\[1\\]?")]),
    ("cat a[0-9].txt b", &[(1, "a[0-9].txt")]),
    ("cat {x,y}/*.env", &[(1, "x/*.env"), (2, "y/*.env")]),
    ("cat ~/.ss*/id_*", &[(1, "/home/tester/.ss*/id_*")]),
    ("cat $D/*.rs", &[]),
    ("cat $(ls)*", &[]),
    ("cat plain.txt", &[]),
    ("cd src && cat *.rs", &[(1, "/home/tester/proj/src/*.rs")]),
    ("cd /tmp && cat ../etc/pass*", &[(1, "/tmp/../etc/pass*")]),
    ("cat '*.rs'", &[]),
];

#[test]
fn globs_are_listed_as_patterns() {
    let mut wrong = Vec::new();
    for &(command, expected) in GLOBS {
        let analysis = analyze(command, &places());
        let got: Vec<(usize, String)> = analysis
            .simple_commands
            .last()
            .map(|c| c.globs.clone())
            .unwrap_or_default();
        let expected: Vec<(usize, String)> = expected
            .iter()
            .map(|(i, p)| (*i, (*p).to_owned()))
            .collect();
        if got != expected {
            wrong.push(format!("{command:?}: {got:?}, expected {expected:?}"));
        }
        let command = analysis.simple_commands.last();
        for (i, _) in &got {
            assert_eq!(
                command.and_then(|c| c.argv[*i].clone()),
                None,
                "{command:?}"
            );
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
