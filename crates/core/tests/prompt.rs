//! The system prompt and the project instructions it carries.

use std::path::{Path, PathBuf};

use rein_core::prompt::{
    PROJECT_INSTRUCTIONS_LIMIT_BYTES, PromptInputs, build_system_prompt, find_project_instructions,
};

/// The tools as the agent will list them (names from DESIGN.md).
const TOOLS: &[(&str, &str)] = &[
    ("read_file", "Read a text file, with line numbers."),
    ("write_file", "Create a file or replace its whole content."),
    ("edit_file", "Replace an exact string in a file."),
    ("glob", "Find files by name pattern."),
    ("grep", "Search file contents with a regular expression."),
    ("bash", "Run a shell command in the working directory."),
    ("todo_write", "Keep a short task list for multi-step work."),
    ("agent", "Hand a self-contained task to a sub-agent."),
];

fn fixed_inputs<'a>(instructions: Option<&'a str>) -> PromptInputs<'a> {
    PromptInputs {
        cwd: Path::new("/home/ann/src/app"),
        os: "linux",
        shell: "/bin/bash",
        date: "2025-06-01",
        is_git_repo: true,
        tools: TOOLS,
        project_instructions: instructions,
    }
}

#[test]
fn the_rendered_prompt_matches_its_snapshot() {
    let instructions = "## /home/ann/src/app/AGENTS.md\n\nRun `make test` before you finish.";
    insta::assert_snapshot!(build_system_prompt(&fixed_inputs(Some(instructions))));
}

#[test]
fn the_prompt_is_byte_identical_for_the_same_inputs() {
    let first = build_system_prompt(&fixed_inputs(Some("Use tabs.")));
    let second = build_system_prompt(&fixed_inputs(Some("Use tabs.")));
    assert_eq!(first.as_bytes(), second.as_bytes());
}

#[test]
fn the_prompt_stays_small() {
    // The first request, tool schemas included, must stay under 6 KB; the prompt's share is
    // about 2.5 KB.
    let prompt = build_system_prompt(&fixed_inputs(None));
    assert!(
        prompt.len() < 3 * 1024,
        "the prompt grew to {} bytes",
        prompt.len()
    );
    assert!(!prompt.contains("Project instructions"));
}

#[test]
fn text_in_the_inputs_is_not_mistaken_for_placeholders() {
    let prompt = build_system_prompt(&fixed_inputs(Some("Write `{date}` and {tools} literally.")));
    assert!(
        prompt.contains("Write `{date}` and {tools} literally."),
        "{prompt}"
    );
}

struct Tree {
    _tmp: tempfile::TempDir,
    root: PathBuf,
}

impl Tree {
    fn new() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("repo");
        std::fs::create_dir_all(root.join("a/b/c")).unwrap();
        Tree { _tmp: tmp, root }
    }

    fn write(&self, rel: &str, text: &str) -> PathBuf {
        let path = self.root.join(rel);
        std::fs::write(&path, text).unwrap();
        path
    }
}

#[test]
fn instructions_are_read_from_the_root_down_to_the_working_directory() {
    let tree = Tree::new();
    // Above the root: not part of the project.
    std::fs::write(tree.root.parent().unwrap().join("AGENTS.md"), "outside").unwrap();
    let deep = tree.write("a/b/AGENTS.md", "deep rules");
    let top = tree.write("AGENTS.md", "top rules\n");
    // Below the working directory: not read either.
    tree.write("a/b/c/AGENTS.md", "too deep");

    let found = find_project_instructions(
        &tree.root,
        &tree.root.join("a/b"),
        None,
        PROJECT_INSTRUCTIONS_LIMIT_BYTES,
    )
    .unwrap()
    .unwrap();
    assert_eq!(found.files, [top.clone(), deep.clone()]);
    assert_eq!(
        found.text,
        format!(
            "## {}\n\ntop rules\n\n## {}\n\ndeep rules",
            top.display(),
            deep.display()
        )
    );
    assert!(!found.truncated);
}

#[test]
fn claude_md_is_read_only_where_there_is_no_agents_md() {
    let tree = Tree::new();
    let top = tree.write("AGENTS.md", "agents at the top");
    tree.write("CLAUDE.md", "claude at the top");
    let a = tree.write("a/CLAUDE.md", "claude in a");
    let found = find_project_instructions(
        &tree.root,
        &tree.root.join("a/b"),
        None,
        PROJECT_INSTRUCTIONS_LIMIT_BYTES,
    )
    .unwrap()
    .unwrap();
    assert_eq!(found.files, [top, a]);
    assert!(!found.text.contains("claude at the top"));
    assert!(found.text.contains("claude in a"));
}

#[test]
fn no_instruction_files_means_none() {
    let tree = Tree::new();
    tree.write("a/AGENTS.md", "  \n");
    let found = find_project_instructions(
        &tree.root,
        &tree.root.join("a"),
        None,
        PROJECT_INSTRUCTIONS_LIMIT_BYTES,
    )
    .unwrap();
    assert_eq!(found, None);
}

#[test]
fn instructions_are_capped_at_32_kib_with_a_notice() {
    let tree = Tree::new();
    // Multi-byte characters, so the cut must respect character boundaries.
    tree.write("AGENTS.md", &"é rule\n".repeat(4000));
    tree.write("a/AGENTS.md", &"x".repeat(1 << 20));
    let found = find_project_instructions(
        &tree.root,
        &tree.root.join("a"),
        None,
        PROJECT_INSTRUCTIONS_LIMIT_BYTES,
    )
    .unwrap()
    .unwrap();
    assert!(found.truncated);
    assert!(found.text.len() <= 32 * 1024, "{} bytes", found.text.len());
    assert!(
        found
            .text
            .ends_with("[Project instructions cut at 32 KiB; read the files above for the rest.]")
    );
    assert!(
        found
            .text
            .starts_with(&format!("## {}", tree.root.join("AGENTS.md").display()))
    );
}
