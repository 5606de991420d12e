//! The output budget, end to end: an offloaded result can be read back with read_file.

use anyhow::Result;
use serde_json::json;

use crate::support::Env;

#[tokio::test]
async fn offloaded_output_is_readable_at_the_offset_given() -> Result<()> {
    let env = Env::with_config(|c| c.output_budget_chars = 3000)?;
    let big: String = (1..=3000).map(|i| format!("match line {i}\n")).collect();
    env.write("big.txt", &big)?;
    // grep output of 200 lines is over the small budget: it is offloaded.
    let out = env.ok("grep", json!({"pattern": "match line"})).await?;
    assert!(out.chars().count() <= 3000, "{}", out.len());
    let notice = out
        .lines()
        .find(|l| l.contains("characters cut"))
        .expect("a notice");
    let path = notice
        .split("file_path=\"")
        .nth(1)
        .and_then(|r| r.split('"').next())
        .expect("a path");
    let offset: u64 = notice
        .split("offset=")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .expect("offset")
        .parse()?;
    assert!(path.starts_with(env.offload.to_str().unwrap()));
    let rest = env
        .ok(
            "read_file",
            json!({"file_path": path, "offset": offset, "limit": 1}),
        )
        .await?;
    // The first cut line is the one after the head shown.
    let head_last = out
        .lines()
        .take_while(|l| !l.contains("characters cut"))
        .last()
        .unwrap();
    let head_n: u64 = head_last.rsplit(' ').next().unwrap().parse()?;
    assert!(
        rest.contains(&format!("big.txt:{}:match line {}", head_n + 1, head_n + 1)),
        "{rest}"
    );
    Ok(())
}

#[tokio::test]
async fn a_cut_part_of_long_lines_says_how_to_read_them() -> Result<()> {
    let env = Env::with_config(|c| c.output_budget_chars = 3000)?;
    // Ten lines of 2,500 characters: read_file would cut each at 2,000.
    let out = env
        .ok(
            "bash",
            json!({"command": "for i in $(seq 10); do head -c 2500 /dev/zero | tr '\\0' x; echo; done"}),
        )
        .await?;
    let notice = out
        .lines()
        .find(|l| l.contains("characters cut"))
        .expect("a notice");
    assert!(
        notice.contains("read those with bash, e.g. cut -c"),
        "{notice}"
    );

    // Short lines get no such hint.
    let out = env.ok("bash", json!({"command": "seq 5000"})).await?;
    let notice = out
        .lines()
        .find(|l| l.contains("characters cut"))
        .expect("a notice");
    assert!(!notice.contains("cut -c"), "{notice}");
    Ok(())
}

#[tokio::test]
async fn the_saved_file_is_found_again_in_both_notices() -> Result<()> {
    let env = Env::with_config(|c| c.output_budget_chars = 3000)?;
    let big: String = (1..=3000).map(|i| format!("match line {i}\n")).collect();
    env.write("big.txt", &big)?;
    // The budget's notice (grep), and the bash tool's own (it saves as it runs).
    let grep = env.ok("grep", json!({"pattern": "match line"})).await?;
    let bash = env.ok("bash", json!({"command": "seq 1 20000"})).await?;
    for out in [grep, bash] {
        let path = rein_tools::saved_output_path(&out).expect("a saved file");
        assert!(path.starts_with(env.offload.to_str().unwrap()), "{path}");
        assert!(std::path::Path::new(path).is_file(), "{path}");
    }
    assert_eq!(rein_tools::saved_output_path(&big), None);
    assert_eq!(
        rein_tools::saved_output_path("say read_file, file_path=\"/etc/passwd\" please"),
        None,
        "only a notice line counts"
    );
    Ok(())
}
