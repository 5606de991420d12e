//! edit_file: the ladder, refusals, what an edit keeps, and the diff.

use std::os::unix::fs::PermissionsExt;

use anyhow::Result;
use serde_json::json;

use crate::support::Env;

async fn edit(env: &Env, file: &str, old: &str, new: &str) -> Result<String> {
    env.ok(
        "edit_file",
        json!({"file_path": file, "old_string": old, "new_string": new}),
    )
    .await
}

async fn refused(env: &Env, file: &str, old: &str, new: &str) -> Result<String> {
    env.err(
        "edit_file",
        json!({"file_path": file, "old_string": old, "new_string": new}),
    )
    .await
}

#[tokio::test]
async fn an_exact_edit_answers_with_a_diff() -> Result<()> {
    let env = Env::new()?;
    env.write(
        "a.rs",
        "fn a() {}\nfn b() {\n    old();\n}\nfn c() {}\nfn d() {}\nfn e() {}\nfn f() {}\n",
    )?;
    env.read_tool("a.rs").await?;
    let out = edit(&env, "a.rs", "    old();", "    new();\n    more();").await?;
    assert_eq!(
        out,
        "Edited a.rs: replaced 1 occurrence\n--- a.rs\n+++ a.rs\n@@ -1,6 +1,7 @@\n fn a() {}\n fn b() {\n-    old();\n+    new();\n+    more();\n }\n fn c() {}\n fn d() {}\n"
    );
    assert_eq!(
        env.read("a.rs")?,
        b"fn a() {}\nfn b() {\n    new();\n    more();\n}\nfn c() {}\nfn d() {}\nfn e() {}\nfn f() {}\n"
    );
    Ok(())
}

#[tokio::test]
async fn edits_require_a_fresh_read_but_not_between_own_edits() -> Result<()> {
    let env = Env::new()?;
    env.write("a.txt", "alpha\nbeta\n")?;
    let msg = refused(&env, "a.txt", "alpha", "ALPHA").await?;
    assert!(msg.contains("has not been read in this session"), "{msg}");
    env.read_tool("a.txt").await?;
    edit(&env, "a.txt", "alpha", "ALPHA").await?;
    edit(&env, "a.txt", "beta", "BETA").await?;
    env.write("a.txt", "someone else\n")?;
    let msg = refused(&env, "a.txt", "someone", "me").await?;
    assert!(
        msg.contains("has changed on disk since you read it"),
        "{msg}"
    );
    assert_eq!(env.read("a.txt")?, b"someone else\n");
    Ok(())
}

#[tokio::test]
async fn ambiguous_matches_are_refused_with_count_and_lines() -> Result<()> {
    let env = Env::new()?;
    env.write("a.txt", "x = 1\ny = 2\nx = 1\nz = 3\nx = 1\n")?;
    env.read_tool("a.txt").await?;
    let msg = refused(&env, "a.txt", "x = 1", "x = 9").await?;
    assert_eq!(
        msg,
        "old_string matches 3 places in a.txt, starting on lines 1, 3, 5. Include more surrounding lines so it matches exactly one place, or set replace_all to true to change every occurrence."
    );
    // Ambiguity at a forgiving rung is refused too, naming the rung.
    let msg = refused(&env, "a.txt", "  x = 1  ", "x = 9").await?;
    assert!(
        msg.contains("matches 3 places in a.txt ignoring indentation"),
        "{msg}"
    );
    // "aa" overlaps itself in "aaa": two places, not one.
    env.write("b.txt", "aaa\n")?;
    env.read_tool("b.txt").await?;
    let msg = refused(&env, "b.txt", "aa", "b").await?;
    assert!(msg.starts_with("old_string matches 2 places"), "{msg}");
    Ok(())
}

#[tokio::test]
async fn a_near_miss_is_refused_showing_the_closest_region() -> Result<()> {
    let env = Env::new()?;
    let text = "use std::io;\n\nfn main() {\n    let total = compute(1, 2);\n    println!(\"{total}\");\n}\n\nfn compute(a: u32, b: u32) -> u32 {\n    a + b\n}\n";
    env.write("main.rs", text)?;
    env.read_tool("main.rs").await?;
    let msg = refused(
        &env,
        "main.rs",
        "fn compute(a: u32, b: u64) -> u32 {\n    a + b\n}",
        "x",
    )
    .await?;
    assert!(
        msg.starts_with("old_string was not found in main.rs, not even with"),
        "{msg}"
    );
    assert!(msg.contains("The most similar part is lines 7-10:\n 7\t\n 8\tfn compute(a: u32, b: u32) -> u32 {\n 9\t    a + b\n10\t}\n"), "{msg}");
    assert_eq!(env.read("main.rs")?, text.as_bytes());
    let msg = refused(&env, "main.rs", "qwerty zxcv", "x").await?;
    assert!(
        msg.ends_with("Nothing in the file resembles it; read the file again with read_file."),
        "{msg}"
    );
    Ok(())
}

#[tokio::test]
async fn replace_all_replaces_every_exact_occurrence() -> Result<()> {
    let env = Env::new()?;
    env.write("a.txt", "foo bar foo\nfoofoo\n")?;
    env.read_tool("a.txt").await?;
    let out = env.ok("edit_file", json!({"file_path": "a.txt", "old_string": "foo", "new_string": "baz", "replace_all": true})).await?;
    assert!(
        out.starts_with("Edited a.txt: replaced 4 occurrences\n"),
        "{out}"
    );
    assert_eq!(env.read("a.txt")?, b"baz bar baz\nbazbaz\n");
    Ok(())
}

#[tokio::test]
async fn identical_strings_and_empty_old_string() -> Result<()> {
    let env = Env::new()?;
    env.write("a.txt", "a\n")?;
    env.read_tool("a.txt").await?;
    let msg = refused(&env, "a.txt", "a", "a").await?;
    assert_eq!(
        msg,
        "old_string and new_string are the same; there is nothing to change."
    );
    let msg = refused(&env, "a.txt", "", "new").await?;
    assert!(
        msg.contains("already exists, so an empty old_string cannot create it"),
        "{msg}"
    );
    let out = edit(&env, "new/dir/b.txt", "", "hello\nworld\n").await?;
    assert_eq!(out, "Created new/dir/b.txt (2 lines)");
    assert_eq!(env.read("new/dir/b.txt")?, b"hello\nworld\n");
    // Created means known: it can be edited straight away.
    edit(&env, "new/dir/b.txt", "world", "there").await?;
    let msg = refused(&env, "missing.txt", "x", "y").await?;
    assert!(msg.starts_with("File not found: missing.txt."), "{msg}");
    Ok(())
}

#[tokio::test]
async fn crlf_bom_final_newline_and_permissions_are_kept() -> Result<()> {
    let env = Env::new()?;
    let path = env.write("win.txt", "\u{feff}one\r\ntwo\r\nthree")?;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640))?;
    env.read_tool("win.txt").await?;
    // The model writes LF (as read_file shows the text); the file stays CRLF.
    let out = edit(&env, "win.txt", "one\ntwo", "one\nand a half\ntwo").await?;
    assert!(out.contains("line endings normalised"), "{out}");
    assert_eq!(
        env.read("win.txt")?,
        "\u{feff}one\r\nand a half\r\ntwo\r\nthree".as_bytes()
    );
    edit(&env, "win.txt", "three", "3").await?;
    assert_eq!(
        env.read("win.txt")?,
        "\u{feff}one\r\nand a half\r\ntwo\r\n3".as_bytes()
    );
    assert_eq!(
        std::fs::metadata(&path)?.permissions().mode() & 0o777,
        0o640
    );
    Ok(())
}

#[tokio::test]
async fn trailing_whitespace_is_forgiven() -> Result<()> {
    let env = Env::new()?;
    env.write("a.py", "def f():   \n    return 1\n")?;
    env.read_tool("a.py").await?;
    let out = edit(
        &env,
        "a.py",
        "def f():\n    return 1",
        "def f():\n    return 2",
    )
    .await?;
    assert!(out.contains("ignoring trailing whitespace"), "{out}");
    // The line repeated unchanged keeps the file's bytes, trailing spaces included.
    assert_eq!(env.read("a.py")?, b"def f():   \n    return 2\n");
    Ok(())
}

#[tokio::test]
async fn indentation_is_forgiven_and_new_text_takes_the_files_tabs() -> Result<()> {
    let env = Env::new()?;
    env.write("main.go", "func main() {\n\tif ok {\n\t\trun()\n\t}\n}\n")?;
    env.read_tool("main.go").await?;
    let out = edit(
        &env,
        "main.go",
        "if ok {\n    run()\n}",
        "if ok {\n    run()\n    if again {\n        run()\n    }\n}",
    )
    .await?;
    assert!(
        out.contains("ignoring indentation; new_string was re-indented"),
        "{out}"
    );
    assert_eq!(
        String::from_utf8(env.read("main.go")?)?,
        "func main() {\n\tif ok {\n\t\trun()\n\t\tif again {\n\t\t\trun()\n\t\t}\n\t}\n}\n"
    );
    Ok(())
}

#[tokio::test]
async fn read_file_line_numbers_are_stripped() -> Result<()> {
    let env = Env::new()?;
    env.write("a.txt", "first\nsecond\nthird\n")?;
    let shown = env.read_tool("a.txt").await?;
    let old: String = shown.lines().skip(1).take(1).collect();
    assert_eq!(old, "2\tsecond");
    let out = edit(&env, "a.txt", &old, "2\tSECOND").await?;
    assert!(out.contains("read_file line numbers were removed"), "{out}");
    assert_eq!(env.read("a.txt")?, b"first\nSECOND\nthird\n");
    Ok(())
}

#[tokio::test]
async fn binary_and_non_utf8_files_are_refused() -> Result<()> {
    let env = Env::new()?;
    env.write("latin1.txt", b"caf\xe9\n")?;
    env.read_tool("latin1.txt").await?;
    let msg = refused(&env, "latin1.txt", "caf", "tea").await?;
    assert!(msg.contains("is not valid UTF-8 (at byte 3)"), "{msg}");
    std::fs::create_dir(env.root.join("d"))?;
    let msg = refused(&env, "d", "a", "b").await?;
    assert_eq!(msg, "d is a directory; give the path of a file.");
    Ok(())
}

#[tokio::test]
async fn a_long_diff_is_cut_with_a_marker() -> Result<()> {
    let env = Env::new()?;
    let text: String = (0..1000).map(|i| format!("item {i}\n")).collect();
    env.write("list.txt", text)?;
    env.read_tool("list.txt").await?;
    let out = env.ok("edit_file", json!({"file_path": "list.txt", "old_string": "item", "new_string": "entry", "replace_all": true})).await?;
    assert!(out.starts_with("Edited list.txt: replaced 1000 occurrences\n"));
    assert!(
        out.ends_with("[... diff cut at 200 lines]\n"),
        "{}",
        &out[out.len() - 200..]
    );
    assert!(out.lines().count() < 210);
    Ok(())
}

#[tokio::test]
async fn a_diff_at_the_end_marks_a_missing_final_newline() -> Result<()> {
    let env = Env::new()?;
    env.write("a.txt", "a\nb")?;
    env.read_tool("a.txt").await?;
    let out = edit(&env, "a.txt", "b", "c").await?;
    assert!(
        out.ends_with("-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n"),
        "{out}"
    );
    Ok(())
}

#[tokio::test]
async fn far_apart_changes_get_separate_hunks_with_right_line_numbers() -> Result<()> {
    let env = Env::new()?;
    let text: String = (1..=30)
        .map(|i| {
            if i == 5 || i == 25 {
                "target\n".to_owned()
            } else {
                format!("l{i}\n")
            }
        })
        .collect();
    env.write("a.txt", text)?;
    env.read_tool("a.txt").await?;
    let out = env.ok("edit_file", json!({"file_path": "a.txt", "old_string": "target\n", "new_string": "t1\nt2\n", "replace_all": true})).await?;
    assert!(
        out.contains("@@ -2,7 +2,8 @@\n l2\n l3\n l4\n-target\n+t1\n+t2\n l6\n"),
        "{out}"
    );
    assert!(out.contains("@@ -22,7 +23,8 @@\n l22\n"), "{out}");
    Ok(())
}
