//! Each property of confined opening, with `openat2` and with the per-component walk.

use std::io::Read;
use std::os::unix::fs::symlink;

use super::*;
use crate::ToolConfig;

const WALKS: [Walk; 2] = [Walk::Best, Walk::PerComponent];

struct Fixture {
    _dir: tempfile::TempDir,
    ws: PathBuf,
    outside: PathBuf,
    ctx: ToolContext,
}

fn fixture() -> io::Result<Fixture> {
    let dir = tempfile::tempdir()?;
    let base = dir.path().canonicalize()?;
    let ws = base.join("ws");
    let outside = base.join("outside");
    std::fs::create_dir_all(ws.join("sub"))?;
    std::fs::create_dir_all(&outside)?;
    std::fs::write(ws.join("sub/a.txt"), "inside")?;
    std::fs::write(outside.join("a.txt"), "outside")?;
    let ctx = ToolContext::new(ToolConfig::new(&ws, base.join("offload")));
    Ok(Fixture {
        _dir: dir,
        ws,
        outside,
        ctx,
    })
}

fn is_changed(err: &io::Error) -> bool {
    err.to_string().contains("a symbolic link appeared")
}

#[test]
fn opens_a_file_below_the_workspace() -> io::Result<()> {
    let f = fixture()?;
    for walk in WALKS {
        let confined = Confined::with_walk(&f.ctx, &f.ws.join("sub/a.txt"), walk)?;
        let Target::File(mut file, meta) = confined.target()? else {
            panic!("{walk:?}: not opened as a file");
        };
        let mut text = String::new();
        file.read_to_string(&mut text)?;
        assert_eq!((text.as_str(), meta.len()), ("inside", 6), "{walk:?}");
        let missing = Confined::with_walk(&f.ctx, &f.ws.join("nope/b.txt"), walk)?;
        assert!(matches!(missing.target()?, Target::Missing), "{walk:?}");
        let root = Confined::with_walk(&f.ctx, &f.ws, walk)?;
        assert!(matches!(root.target()?, Target::Directory), "{walk:?}");
    }
    Ok(())
}

#[test]
fn a_link_that_appears_on_the_way_is_never_followed() -> io::Result<()> {
    let f = fixture()?;
    // The path was checked as ws/sub/a.txt; then sub became a link to the outside.
    std::fs::rename(f.ws.join("sub"), f.ws.join("old-sub"))?;
    symlink(&f.outside, f.ws.join("sub"))?;
    for walk in WALKS {
        let confined = Confined::with_walk(&f.ctx, &f.ws.join("sub/a.txt"), walk)?;
        match confined.target() {
            Err(err) => assert!(is_changed(&err), "{walk:?}: {err}"),
            Ok(target) => panic!("{walk:?}: went through the link: {target:?}"),
        }
        let err = confined.create_parent().map(drop).unwrap_err();
        assert!(is_changed(&err), "{walk:?}: {err}");
    }
    Ok(())
}

#[test]
fn a_link_that_appears_at_the_end_is_never_followed() -> io::Result<()> {
    let f = fixture()?;
    std::fs::remove_file(f.ws.join("sub/a.txt"))?;
    symlink(f.outside.join("a.txt"), f.ws.join("sub/a.txt"))?;
    for walk in WALKS {
        let confined = Confined::with_walk(&f.ctx, &f.ws.join("sub/a.txt"), walk)?;
        let err = confined.target().map(drop).unwrap_err();
        assert!(is_changed(&err), "{walk:?}: {err}");
    }
    Ok(())
}

#[test]
fn missing_directories_are_created_inside_only() -> io::Result<()> {
    let f = fixture()?;
    let confined = Confined::new(&f.ctx, &f.ws.join("x/y/z.txt"))?;
    let parent = confined.create_parent()?;
    assert_eq!(parent.name(), "z.txt");
    assert!(f.ws.join("x/y").is_dir());

    symlink(&f.outside, f.ws.join("out"))?;
    let confined = Confined::new(&f.ctx, &f.ws.join("out/new/z.txt"))?;
    let err = confined.create_parent().map(drop).unwrap_err();
    assert!(is_changed(&err), "{err}");
    assert!(!f.outside.join("new").exists());
    Ok(())
}

#[test]
fn a_fifo_is_reported_without_being_opened() -> io::Result<()> {
    let f = fixture()?;
    let fifo = f.ws.join("pipe");
    rustix::fs::mknodat(
        rustix::fs::CWD,
        &fifo,
        FileType::Fifo,
        Mode::from_bits_truncate(0o600),
        0,
    )?;
    // Opening a FIFO for reading would block until a writer came.
    let confined = Confined::new(&f.ctx, &fifo)?;
    assert!(matches!(confined.target()?, Target::Other(FileType::Fifo)));
    Ok(())
}

#[test]
fn paths_outside_every_allowed_directory_are_refused() -> io::Result<()> {
    let f = fixture()?;
    assert!(Confined::new(&f.ctx, &f.outside.join("a.txt")).is_err());
    Ok(())
}

#[test]
fn an_allowed_directory_that_does_not_exist_yet_is_made_on_write() -> io::Result<()> {
    let f = fixture()?;
    let offload = f.ws.parent().unwrap_or(&f.ws).join("offload");
    let confined = Confined::new(&f.ctx, &offload.join("out.txt"))?;
    assert!(matches!(confined.target()?, Target::Missing));
    let parent = confined.create_parent()?;
    assert_eq!(parent.name(), "out.txt");
    assert!(offload.is_dir());
    Ok(())
}
