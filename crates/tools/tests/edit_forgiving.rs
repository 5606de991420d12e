//! edit_file forgiving the mistakes models make when quoting a file, one table row per case:
//! the file before, the strings sent, and either the file after with what the answer says
//! about how old_string was found, or the refusal and the untouched file.

use anyhow::{Result, bail};
use serde_json::json;

use crate::support::Env;

#[derive(Debug, Clone, Copy)]
enum Expect {
    /// The edit lands: the file after, and a phrase the answer must contain.
    Lands(&'static str, &'static str),
    /// The edit is refused: a phrase the message must contain.
    Refused(&'static str),
}

use Expect::{Lands, Refused};

struct Case {
    name: &'static str,
    file: &'static str,
    old: &'static str,
    new: &'static str,
    replace_all: bool,
    expect: Expect,
}

const fn case(
    name: &'static str,
    file: &'static str,
    old: &'static str,
    new: &'static str,
    expect: Expect,
) -> Case {
    Case {
        name,
        file,
        old,
        new,
        replace_all: false,
        expect,
    }
}

const fn all(
    name: &'static str,
    file: &'static str,
    old: &'static str,
    new: &'static str,
    expect: Expect,
) -> Case {
    Case {
        replace_all: true,
        ..case(name, file, old, new, expect)
    }
}

const CASES: &[Case] = &[
    // Typographic look-alikes, both ways.
    case(
        "ascii quotes find curly ones; the changed line is written as given",
        "msg = “Hello”\nnext()\n",
        "msg = \"Hello\"",
        "msg = \"Hi\"",
        Lands(
            "msg = \"Hi\"\nnext()\n",
            "matched ignoring typographic quotes",
        ),
    ),
    case(
        "a repeated line keeps the file's curly quotes",
        "title = “Intro”\nbody = 1\n",
        "title = \"Intro\"\nbody = 1",
        "title = \"Intro\"\nbody = 2",
        Lands(
            "title = “Intro”\nbody = 2\n",
            "lines you repeated unchanged kept the file's own text",
        ),
    ),
    case(
        "curly quotes from the model find ascii ones",
        "say(\"hi\")\n",
        "say(“hi”)",
        "say(“hi”)\nsay(“bye”)",
        Lands(
            "say(\"hi\")\nsay(“bye”)\n",
            "matched ignoring typographic quotes",
        ),
    ),
    case(
        "an apostrophe inside a word",
        "It’s done.\nNext.\n",
        "It's done.",
        "It's finished.",
        Lands("It's finished.\nNext.\n", "typographic quotes"),
    ),
    case(
        "an en dash for a hyphen",
        "– first item\n– second item\n",
        "- second item",
        "- last item",
        Lands("– first item\n- last item\n", "typographic dashes"),
    ),
    case(
        "an em dash in prose, the hyphen line repeated keeps it",
        "Wait — really?\nYes.\n",
        "Wait - really?\nYes.",
        "Wait - really?\nNo.",
        Lands("Wait — really?\nNo.\n", "typographic dashes"),
    ),
    case(
        "a no-break space for a space",
        "price:\u{a0}10 EUR\n",
        "price: 10 EUR",
        "price: 12 EUR",
        Lands("price: 12 EUR\n", "no-break spaces"),
    ),
    case(
        "a repeated line keeps its no-break space",
        "a\u{a0}b\nc\n",
        "a b\nc",
        "a b\nd",
        Lands("a\u{a0}b\nd\n", "no-break spaces"),
    ),
    case(
        "look-alikes and indentation together, in a tab file",
        "def f():\n\tif x:\n\t\tsay(“hi”)\n",
        "if x:\n    say(\"hi\")",
        "if x:\n    say(\"hi\")\n    done()",
        Lands(
            "def f():\n\tif x:\n\t\tsay(“hi”)\n\t\tdone()\n",
            "ignoring indentation and typographic quotes",
        ),
    ),
    case(
        "a unique exact match wins over its curly twin",
        "x = “a”\ny = \"a\"\n",
        "\"a\"",
        "\"b\"",
        Lands("x = “a”\ny = \"b\"\n", "replaced 1 occurrence\n"),
    ),
    case(
        "two curly places are refused",
        "p(“q”)\nr(“q”)\n",
        "\"q\"",
        "\"z\"",
        Refused("matches 2 places in f.txt ignoring typographic quotes"),
    ),
    // Over-escaped strings (one level of JSON escaping).
    case(
        "line breaks and indentation sent as escapes",
        "def f():\n    return 1\n",
        "def f():\\n    return 1",
        "def f():\\n    return 2",
        Lands("def f():\n    return 2\n", "one level of JSON escaping"),
    ),
    case(
        "escaped quotes",
        "print(\"hi\")\n",
        "print(\\\"hi\\\")",
        "print(\\\"bye\\\")",
        Lands("print(\"bye\")\n", "JSON escaping"),
    ),
    case(
        "old_string escaped, new_string plain",
        "a = 1\nb = 2\n",
        "a = 1\\nb = 2",
        "a = 1\nb = 3",
        Lands("a = 1\nb = 3\n", "JSON escaping"),
    ),
    case(
        "a double backslash is one backslash",
        "path = \"C:\\\\dir\"\nx\n",
        "path = \\\"C:\\\\\\\\dir\\\"\\nx",
        "path = \\\"D:\\\\\\\\dir\\\"\\nx",
        Lands("path = \"D:\\\\dir\"\nx\n", "JSON escaping"),
    ),
    case(
        "new_string mixing real line breaks with \\n escapes is refused",
        "def f():\n    return 1\n",
        "def f():\\n    return 1",
        "def f():\n    print(\"a\\nb\")\\n    return 2",
        Refused("new_string mixes real line breaks with \\n escapes"),
    ),
    case(
        "an escape inside a string literal beside real line breaks is never decoded",
        "print(\"a\\nb\")\nx = 1\n",
        "print(\"a\\nb\")\nx = 2",
        "print(\"a\\nb\")\nx = 3",
        Refused("not found"),
    ),
    case(
        "a file holding escapes is edited as written",
        "{\"code\": \"line1\\nline2\"}\n",
        "\"line1\\nline2\"",
        "\"line1\\nline3\"",
        Lands("{\"code\": \"line1\\nline3\"}\n", "replaced 1 occurrence\n"),
    ),
    // Diff markers, as in edit_file's own answers.
    case(
        "a hunk copied from edit_file's diff stands for the text after it",
        "fn a() {}\nfn b() {\n    new();\n    more();\n}\n",
        "@@ -1,4 +1,5 @@\n fn a() {}\n fn b() {\n-    old();\n+    new();\n+    more();\n }",
        "fn a() {}\nfn b() {\n    newer();\n}",
        Lands("fn a() {}\nfn b() {\n    newer();\n}\n", "diff markers"),
    ),
    case(
        "markers in both strings",
        "fn b() {\n    new();\n}\n",
        " fn b() {\n+    new();\n }",
        " fn b() {\n+    newer();\n }",
        Lands("fn b() {\n    newer();\n}\n", "diff markers"),
    ),
    case(
        "a diff split across the strings",
        "a()\nb()\nc()\n",
        " a()\n-b()\n c()",
        " a()\n+B()\n c()",
        Lands("a()\nB()\nc()\n", "diff markers"),
    ),
    case(
        "context lines with a marked new_string are never written with their markers",
        "def f():\n    x = 1\n    y = 2\n",
        " def f():\n     x = 1",
        " def f():\n     x = 1\n+    z = 3",
        Lands(
            "def f():\n    x = 1\n    z = 3\n    y = 2\n",
            "diff markers",
        ),
    ),
    case(
        "new_string with markers on some lines only is refused",
        "fn b() {\n    new();\n}\n",
        " fn b() {\n+    new();\n }",
        "fn b() {\n+    newer();\n}",
        Refused("new_string has diff markers (+, -) on some lines but not on others"),
    ),
    case(
        "a patch file is edited as written",
        "--- a\n+++ b\n+foo\n-bar\n",
        "+foo",
        "+baz",
        Lands("--- a\n+++ b\n+baz\n-bar\n", "replaced 1 occurrence\n"),
    ),
    case(
        "read_file line numbers on old_string only",
        "first\nsecond\nthird\n",
        "     2\tsecond\n     3\tthird",
        "second\nTHIRD",
        Lands(
            "first\nsecond\nTHIRD\n",
            "read_file line numbers were removed",
        ),
    ),
    case(
        "read_file line numbers on some lines of new_string only are refused",
        "first\nsecond\n",
        "1\tfirst\n2\tsecond",
        "1\tfirst\nsecond!",
        Refused("line numbers on some lines but not on others"),
    ),
    // A last line cut short; a final newline ends the line.
    case(
        "a last line cut mid-line keeps the rest of its line",
        "fn f() {\n    let total = compute(a, b);\n}\n",
        "fn f() {\n  let total = comp",
        "fn f() {\n  let sum = comp",
        Lands(
            "fn f() {\n    let sum = compute(a, b);\n}\n",
            "its last line matched the start of line 2",
        ),
    ),
    case(
        "old_string ending in a newline ends the line there",
        "def g():\n    return x_value()\n",
        "def g():\n  return x\n",
        "def g():\n  return y\n",
        Refused("not found"),
    ),
    case(
        "an extra trailing blank line changes nothing in the layout",
        "a()\nb()\nc()\n",
        "a()\nb()\n\n",
        "a()\nB()\n\n",
        Lands("a()\nB()\nc()\n", "the number of blank lines"),
    ),
    case(
        "an extra trailing blank line at the end of the file",
        "x\nfoo()\n",
        "foo()\n\n",
        "bar()\n\n",
        Lands("x\nbar()\n", "blank lines"),
    ),
    // Blank-line runs of another length.
    case(
        "one blank line for the file's two",
        "a()\n\n\nb()\n",
        "a()\n\nb()",
        "a()\n\nb()\nc()",
        Lands("a()\n\n\nb()\nc()\n", "the number of blank lines"),
    ),
    case(
        "a blank line the file lacks",
        "a()\nb()\n",
        "a()\n\nb()",
        "a()\n\nB()",
        Lands("a()\nB()\n", "the number of blank lines"),
    ),
    case(
        "a blank line the model left out",
        "a()\n\nb()\n",
        "a()\nb()",
        "a()\nB()",
        Lands("a()\n\nB()\n", "the number of blank lines"),
    ),
    case(
        "two places under that tolerance are refused",
        "a()\n\nb()\nx\na()\nb()\n",
        "a()\n\n\nb()",
        "c()",
        Refused("matches 2 places in f.txt ignoring the number of blank lines"),
    ),
    case(
        "a blank-line difference that is all new_string changes",
        "a()\nb()\n",
        "a()\n\nb()",
        "a()\nb()",
        Refused("Nothing to change: f.txt already reads as new_string says"),
    ),
    // replace_all: every place at the first rung that finds any, each at its own depth.
    all(
        "a block at two depths in a tab file, written with two spaces",
        "fn a() {\n\tif x {\n\t\tlog(1);\n\t}\n}\nmod m {\n\tfn b() {\n\t\tif x {\n\t\t\tlog(1);\n\t\t}\n\t}\n}\n",
        "if x {\n  log(1);\n}",
        "if x {\n  log(2);\n  done();\n}",
        Lands(
            "fn a() {\n\tif x {\n\t\tlog(2);\n\t\tdone();\n\t}\n}\nmod m {\n\tfn b() {\n\t\tif x {\n\t\t\tlog(2);\n\t\t\tdone();\n\t\t}\n\t}\n}\n",
            "replaced 2 occurrences (old_string matched ignoring indentation",
        ),
    ),
    all(
        "every curly place",
        "say(“a”)\nsay(“a”)\n",
        "say(\"a\")",
        "say(\"b\")",
        Lands("say(\"b\")\nsay(\"b\")\n", "replaced 2 occurrences"),
    ),
    all(
        "an exact place keeps its looser twins out",
        "x = 1\n  x = 1\n",
        "x = 1\n",
        "x = 2\n",
        Lands("x = 2\n  x = 2\n", "replaced 2 occurrences\n"),
    ),
    all(
        "only the exact one when the others differ in layout",
        "if a:\n    go()\ndef f():\n  if a:\n      go()\n",
        "if a:\n    go()",
        "if a:\n    stop()",
        Lands(
            "if a:\n    stop()\ndef f():\n  if a:\n      go()\n",
            "replaced 1 occurrence\n",
        ),
    ),
    // Refusals that must stay refusals.
    case(
        "two functions identical up to whitespace",
        "def a():\n    return 1\n\ndef b():\n  def a():\n      return 1\n",
        "def a():\n  return 1",
        "def a():\n  return 2",
        Refused("matches 2 places in f.txt ignoring indentation"),
    ),
    case(
        "a docstring copy of the code beside the code",
        "def f():\n    \"\"\"\n    Example:\n        x = compute(1)\n        return x\n    \"\"\"\n    x = compute(1)\n    return x\n",
        "  x = compute(1)\n  return x",
        "  x = compute(2)\n  return x",
        Refused("matches 2 places"),
    ),
    case(
        "overlapping repeated lines",
        "  x\n  x\n  x\n",
        "x\nx",
        "y",
        Refused("matches 2 places in f.txt ignoring indentation, starting on lines 1, 2"),
    ),
    case(
        "a string literal whose inner spacing differs",
        "msg = \"a  b\"\n",
        "msg = \"a b\"",
        "msg = \"c\"",
        Refused("not found"),
    ),
    case(
        "a line after a block quoted as inside it",
        "def f(x):\n    if x:\n        run()\n    cleanup()\n    return x\n",
        "if x:\n    run()\n    cleanup()",
        "if x:\n    run()\n    cleanup()\n    log()",
        Refused("Lines 2-4 have old_string's text but nest differently"),
    ),
    case(
        "a line inside a block quoted as after it",
        "if x:\n    run()\n    cleanup()\nend()\n",
        "  if x:\n      run()\n  cleanup()",
        "  if x:\n      run()\n  cleanup()\n  log()",
        Refused("nest differently"),
    ),
    case(
        "a near miss shows the closest region",
        "fn compute(a: u32, b: u32) -> u32 {\n    a + b\n}\n",
        "fn compute(a: u32, b: u64) -> u32 {\n    a + b\n}",
        "x",
        Refused("The most similar part is lines 1-3:"),
    ),
    // Rule 2 with the older rungs.
    case(
        "a CRLF file, re-indented, repeated lines keep their trailing spaces",
        "fn f() {\r\n\tlet a = 1;  \r\n\tlet b = 2;\r\n}\r\n",
        "let a = 1;\nlet b = 2;",
        "let a = 1;\nlet b = 3;\nlet c = 4;",
        Lands(
            "fn f() {\r\n\tlet a = 1;  \r\n\tlet b = 3;\r\n\tlet c = 4;\r\n}\r\n",
            "ignoring trailing whitespace and indentation",
        ),
    ),
];

#[tokio::test]
async fn forgiving_edits_table() -> Result<()> {
    assert!(CASES.len() >= 40, "{} cases", CASES.len());
    let mut failures = Vec::new();
    for case in CASES {
        if let Err(err) = run(case).await {
            failures.push(format!("{}: {err:#}", case.name));
        }
    }
    if !failures.is_empty() {
        bail!(
            "{} of {} cases failed:\n\n{}",
            failures.len(),
            CASES.len(),
            failures.join("\n\n")
        );
    }
    Ok(())
}

async fn run(case: &Case) -> Result<()> {
    let env = Env::new()?;
    env.write("f.txt", case.file)?;
    env.read_tool("f.txt").await?;
    let out = env
        .call(
            "edit_file",
            json!({"file_path": "f.txt", "old_string": case.old, "new_string": case.new, "replace_all": case.replace_all}),
        )
        .await?;
    let after = String::from_utf8(env.read("f.txt")?)?;
    match case.expect {
        Lands(file, says) => {
            if out.is_error {
                bail!("refused: {}", out.content);
            }
            if after != file {
                bail!("file is {after:?}, expected {file:?}\n{}", out.content);
            }
            if !out.content.contains(says) {
                bail!("answer lacks {says:?}: {}", out.content);
            }
        }
        Refused(says) => {
            if !out.is_error {
                bail!("landed: {}\nfile: {after:?}", out.content);
            }
            if after != case.file {
                bail!("a refused edit changed the file to {after:?}");
            }
            if !out.content.contains(says) {
                bail!("message lacks {says:?}: {}", out.content);
            }
        }
    }
    Ok(())
}

#[tokio::test]
async fn lines_copied_from_edit_files_own_diff_find_the_text_again() -> Result<()> {
    let env = Env::new()?;
    env.write("a.rs", "fn a() {}\nfn b() {\n    old();\n}\nfn c() {}\n")?;
    env.read_tool("a.rs").await?;
    let first = env
        .ok(
            "edit_file",
            json!({"file_path": "a.rs", "old_string": "    old();", "new_string": "    new();\n    more();"}),
        )
        .await?;
    // The hunk as the model saw it, header and `-` line included, pasted as old_string; the
    // same hunk with one more `+` line as new_string.
    let hunk: Vec<&str> = first
        .lines()
        .skip_while(|l| !l.starts_with("@@"))
        .take_while(|l| !l.starts_with(" fn c"))
        .collect();
    let old = hunk.join("\n");
    assert!(old.contains("\n-    old();\n+    new();"), "{first}");
    let new = old.replace("+    more();", "+    more();\n+    most();");
    let second = env
        .ok(
            "edit_file",
            json!({"file_path": "a.rs", "old_string": old, "new_string": new}),
        )
        .await?;
    assert!(
        second.contains("diff markers (+, -, space, @@) were removed in both strings"),
        "{second}"
    );
    assert_eq!(
        String::from_utf8(env.read("a.rs")?)?,
        "fn a() {}\nfn b() {\n    new();\n    more();\n    most();\n}\nfn c() {}\n"
    );
    Ok(())
}
