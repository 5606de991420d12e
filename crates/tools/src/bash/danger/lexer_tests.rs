//! Tests of the tokenizer.

use super::*;

fn words(src: &str) -> Vec<Word> {
    tokenize(src)
        .into_iter()
        .filter_map(|t| match t {
            Token::Word(w) => Some(w),
            Token::Op(_) | Token::Redirect(_) => None,
        })
        .collect()
}

fn lits(src: &str) -> Vec<Option<String>> {
    words(src).iter().map(Word::literal).collect()
}

#[test]
fn quotes_and_escapes_are_removed() {
    assert_eq!(
        lits(r#"rm "-rf" '/' \/ a\ b "x\"y" $'\x2f'"#),
        ["rm", "-rf", "/", "/", "a b", "x\"y", "/"].map(|s| Some(s.to_owned()))
    );
}

#[test]
fn variables_stay_recognisable() {
    let w = words(r#"$HOME "${HOME}" ${DIR:?}/x '$HOME'"#);
    assert_eq!(
        w[0].parts,
        [Part::Var(Var {
            name: "HOME".into(),
            modifier: String::new()
        })]
    );
    assert_eq!(
        w[1].parts,
        [
            Part::Lit(String::new()),
            Part::Var(Var {
                name: "HOME".into(),
                modifier: String::new()
            })
        ]
    );
    assert!(matches!(&w[2].parts[0], Part::Var(v) if v.name == "DIR" && v.never_empty()));
    assert_eq!(w[3].literal().as_deref(), Some("$HOME"));
}

#[test]
fn operators_split_commands() {
    let ops: Vec<Op> = tokenize("a && b || c; d & e | f\ng")
        .into_iter()
        .filter_map(|t| {
            if let Token::Op(op) = t {
                Some(op)
            } else {
                None
            }
        })
        .collect();
    assert_eq!(
        ops,
        [Op::And, Op::Or, Op::Semi, Op::Amp, Op::Pipe, Op::Newline]
    );
}

#[test]
fn substitutions_keep_their_source() {
    let w = words("echo $(rm -rf /) `ls` <(curl x)");
    assert_eq!(w[1].parts, [Part::Subst("rm -rf /".into())]);
    assert_eq!(w[2].parts, [Part::Subst("ls".into())]);
    assert_eq!(w[3].parts, [Part::ProcSubst("curl x".into())]);
}

#[test]
fn redirections_carry_targets_and_heredoc_bodies() {
    let tokens = tokenize("cat <<'EOF' > /dev/sda 2>&1\nrm -rf /\nEOF\necho done");
    let redirects: Vec<&Redirect> = tokens
        .iter()
        .filter_map(|t| {
            if let Token::Redirect(r) = t {
                Some(r)
            } else {
                None
            }
        })
        .collect();
    assert_eq!(redirects[0].kind, RedirectKind::HereDoc);
    assert_eq!(redirects[0].body.as_deref(), Some("rm -rf /\n"));
    assert_eq!(redirects[1].kind, RedirectKind::Write);
    assert_eq!(redirects[1].target.literal().as_deref(), Some("/dev/sda"));
    assert_eq!(redirects[2].kind, RedirectKind::DupWrite);
    assert_eq!(
        lits("cat <<'EOF' > x\nrm -rf /\nEOF\necho done"),
        [Some("cat".into()), Some("echo".into()), Some("done".into())]
    );
}

#[test]
fn unterminated_input_is_read_as_far_as_it_goes() {
    assert_eq!(
        lits("rm -rf / 'oops"),
        ["rm", "-rf", "/", "oops"].map(|s| Some(s.to_owned()))
    );
    assert_eq!(
        words("echo $(unclosed")[1].parts,
        [Part::Subst("unclosed".into())]
    );
    assert!(tokenize("\\").len() == 1);
}

#[test]
fn tilde_and_globs_are_marked_only_when_unquoted() {
    let w = words("~/x ~bob '~' /* \"/*\"");
    assert_eq!(w[0].parts[0], Part::Tilde(String::new()));
    assert_eq!(w[1].parts[0], Part::Tilde("bob".into()));
    assert_eq!(w[2].literal().as_deref(), Some("~"));
    assert_eq!(w[3].parts, [Part::Lit("/".into()), Part::Glob("*".into())]);
    assert_eq!(w[4].literal().as_deref(), Some("/*"));
}
