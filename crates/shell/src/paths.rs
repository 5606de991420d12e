//! Paths as the dangerous-command checker sees them: resolved lexically (no file system
//! access), with unquoted globs (see `glob.rs`) and an unknown home directory marked.
//! `/proc/PID/root` is the root directory of a process, so it resolves to `/`.

use std::path::Path;

use super::glob;

/// Stands for the home directory when its path is not known.
pub(crate) const HOME_MARK: char = '\u{E001}';

/// How many glob components of one path are tried against protected names.
const MAX_GLOB_COMPONENTS: usize = 4;

/// Where an absolute path starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Anchor {
    /// The file system root.
    Root,
    /// The home directory (path unknown), `above` levels up.
    Home {
        /// How many `..` went above the home directory.
        above: usize,
    },
}

/// A lexically normalised absolute path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AbsPath {
    /// Where it starts.
    pub(crate) anchor: Anchor,
    /// The components below the anchor, without `.` and `..`.
    pub(crate) components: Vec<String>,
}

impl AbsPath {
    /// The path of a real directory (the workspace root, the home directory).
    pub(crate) fn from_path(path: &Path) -> Option<AbsPath> {
        let text = path.to_str()?;
        resolve(text, None)
    }

    /// The path as a shell would print it; an unknown home is written `~`.
    pub(crate) fn display(&self) -> String {
        let mut out = match self.anchor {
            Anchor::Root => String::new(),
            Anchor::Home { above } => {
                let mut s = String::from("~");
                for _ in 0..above {
                    s.push_str("/..");
                }
                s
            }
        };
        for component in &self.components {
            out.push('/');
            out.push_str(&glob::display(component));
        }
        if out.is_empty() { "/".to_owned() } else { out }
    }

    /// The text a variable holding this path expands to.
    pub(crate) fn as_text(&self) -> String {
        match self.anchor {
            Anchor::Root => self.display(),
            Anchor::Home { .. } => {
                let display = self.display();
                format!("{HOME_MARK}{}", display.trim_start_matches('~'))
            }
        }
    }

    fn push(&mut self, component: &str) {
        match component {
            "" | "." => {}
            ".." => {
                if self.components.pop().is_none()
                    && let Anchor::Home { above } = &mut self.anchor
                {
                    *above += 1;
                }
            }
            other => self.components.push(other.to_owned()),
        }
    }
}

/// Resolves expanded text against the current directory (when known).
pub(crate) fn resolve(text: &str, cwd: Option<&AbsPath>) -> Option<AbsPath> {
    let (mut path, rest) = if let Some(rest) = text.strip_prefix(HOME_MARK) {
        (
            AbsPath {
                anchor: Anchor::Home { above: 0 },
                components: Vec::new(),
            },
            rest,
        )
    } else if text.starts_with('/') {
        (
            AbsPath {
                anchor: Anchor::Root,
                components: Vec::new(),
            },
            text,
        )
    } else {
        (cwd?.clone(), text)
    };
    for component in rest.split('/') {
        path.push(component);
    }
    Some(through_proc(path, cwd))
}

/// `/proc/PID/root/x` is `/x` (`PID` may be `self`, `thread-self`, a number or a glob, and
/// `/proc/PID/task/TID/root` counts too); `/proc/self/cwd/x` is `x` in the current
/// directory, and another process's `cwd` may be anywhere, `/` included.
fn through_proc(mut path: AbsPath, cwd: Option<&AbsPath>) -> AbsPath {
    let process = |c: &String| {
        c == "self"
            || c == "thread-self"
            || glob::has_glob(c)
            || (!c.is_empty() && c.bytes().all(|b| b.is_ascii_digit()))
    };
    while path.anchor == Anchor::Root {
        let skip = match path.components.as_slice() {
            [proc, pid, root, ..] if proc == "proc" && process(pid) && root == "root" => 3,
            [proc, pid, task, tid, root, ..]
                if proc == "proc"
                    && process(pid)
                    && task == "task"
                    && process(tid)
                    && root == "root" =>
            {
                5
            }
            [proc, pid, dir, ..] if proc == "proc" && process(pid) && dir == "cwd" => {
                let own = pid == "self" || pid == "thread-self";
                let base = match cwd {
                    Some(cwd) if own => cwd.clone(),
                    Some(_) | None => AbsPath {
                        anchor: Anchor::Root,
                        components: Vec::new(),
                    },
                };
                let rest = path.components.split_off(3);
                path = base;
                for component in rest {
                    path.push(&component);
                }
                continue;
            }
            _ => break,
        };
        path.components.drain(..skip);
    }
    path
}

/// Which protected place a path names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Protected {
    /// `/`
    Root,
    /// A system directory directly under `/`.
    TopLevel(String),
    /// The home directory.
    Home(String),
    /// A directory that contains the home directory.
    HomeAncestor(String),
    /// The workspace root.
    Workspace(String),
    /// A directory that contains the workspace root.
    WorkspaceAncestor(String),
    /// A directory in home that holds keys or configuration (`~/.ssh`, `~/.config`).
    HomeKeys(String),
    /// The workspace's git repository (`.git` at the workspace root): its history.
    Repository(String),
}

impl Protected {
    /// What losing it means, for the refusal message.
    pub(crate) fn describe(&self) -> String {
        match self {
            Protected::Root => "/ (the whole file system)".to_owned(),
            Protected::TopLevel(path) => format!("the system directory {path}"),
            Protected::Home(path) => format!("your home directory ({path})"),
            Protected::HomeAncestor(path) => format!("{path}, which contains your home directory"),
            Protected::Workspace(path) => format!("the workspace root ({path})"),
            Protected::WorkspaceAncestor(path) => format!("{path}, which contains the workspace"),
            Protected::HomeKeys(path) => {
                format!("{path}, which holds your keys or configuration")
            }
            Protected::Repository(path) => {
                format!("the workspace's git repository ({path}), with all its history")
            }
        }
    }
}

/// How much a command's effect on a directory matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scope {
    /// Deleting: the workspace root is protected too.
    Delete,
    /// Changing permissions or owners: only the system, the home directory and above.
    Permissions,
}

/// The protected place `path` names (or, for a trailing glob like `/*`, whose contents it
/// names), if any. A glob elsewhere (`/[a-z]*`, `/h*/me`) is tried against the names that
/// would make the path protected.
pub(crate) fn protection(
    path: &AbsPath,
    home: Option<&AbsPath>,
    workspace: Option<&AbsPath>,
    scope: Scope,
) -> Option<(Protected, Contents)> {
    protection_within(path, home, workspace, scope, 0)
}

fn protection_within(
    path: &AbsPath,
    home: Option<&AbsPath>,
    workspace: Option<&AbsPath>,
    scope: Scope,
    globs_tried: usize,
) -> Option<(Protected, Contents)> {
    let mut components = path.components.as_slice();
    let mut contents = Contents::Itself;
    while let Some((last, rest)) = components.split_last()
        && glob::matches_everything(last)
    {
        components = rest;
        contents = Contents::Everything;
    }
    if let Some(at) = components.iter().position(|c| glob::has_glob(c)) {
        if globs_tried >= MAX_GLOB_COMPONENTS {
            return None;
        }
        let parent = &components[..at];
        return candidate_names(&path.anchor, parent, home, workspace)
            .into_iter()
            .filter(|name| glob::matches(&components[at], name))
            .find_map(|name| {
                let mut named = path.components.clone();
                named[at] = name;
                let named = AbsPath {
                    anchor: path.anchor.clone(),
                    components: named,
                };
                protection_within(&named, home, workspace, scope, globs_tried + 1)
            });
    }
    let dir = AbsPath {
        anchor: path.anchor.clone(),
        components: components.to_vec(),
    };
    protected_dir(&dir, home, workspace, scope).map(|p| (p, contents))
}

/// The names under `parent` that are protected or lead to something protected.
fn candidate_names(
    anchor: &Anchor,
    parent: &[String],
    home: Option<&AbsPath>,
    workspace: Option<&AbsPath>,
) -> Vec<String> {
    if *anchor != Anchor::Root {
        return Vec::new();
    }
    let mut names: Vec<String> = if parent.is_empty() {
        SYSTEM_DIRS.iter().map(|d| (*d).to_owned()).collect()
    } else {
        Vec::new()
    };
    let within = |place: Option<&AbsPath>| place.is_some_and(|p| p.components == parent);
    if within(home) {
        names.extend(HOME_KEYS.map(str::to_owned));
    }
    if within(workspace) {
        names.push(".git".to_owned());
    }
    for place in [home, workspace].into_iter().flatten() {
        if place.anchor == Anchor::Root
            && place.components.len() > parent.len()
            && place.components.starts_with(parent)
        {
            names.push(place.components[parent.len()].clone());
        }
    }
    names
}

/// Which protected place the directory `dir` is, if any.
fn protected_dir(
    dir: &AbsPath,
    home: Option<&AbsPath>,
    workspace: Option<&AbsPath>,
    scope: Scope,
) -> Option<Protected> {
    let display = dir.display();
    if let Anchor::Home { above } = dir.anchor {
        return match (above, dir.components.as_slice()) {
            (0, []) => Some(Protected::Home(display)),
            (1.., []) => Some(Protected::HomeAncestor(display)),
            (0, [name]) if scope == Scope::Delete && HOME_KEYS.contains(&name.as_str()) => {
                Some(Protected::HomeKeys(display))
            }
            (_, _) => None,
        };
    }
    let child_of = |place: Option<&AbsPath>, names: &[&str]| {
        place.is_some_and(|p| {
            p.anchor == Anchor::Root
                && dir.components.len() == p.components.len() + 1
                && dir.components.starts_with(&p.components)
                && dir
                    .components
                    .last()
                    .is_some_and(|c| names.contains(&c.as_str()))
        })
    };
    if scope == Scope::Delete && child_of(home, &HOME_KEYS) {
        return Some(Protected::HomeKeys(display));
    }
    if scope == Scope::Delete && child_of(workspace, &[".git"]) {
        return Some(Protected::Repository(display));
    }
    if dir.components.is_empty() {
        return Some(Protected::Root);
    }
    let contains = |place: Option<&AbsPath>| {
        place.is_some_and(|p| p.anchor == Anchor::Root && p.components.starts_with(&dir.components))
    };
    if contains(home) {
        let is_home = home.is_some_and(|h| h.components.len() == dir.components.len());
        return Some(if is_home {
            Protected::Home(display)
        } else {
            Protected::HomeAncestor(display)
        });
    }
    if scope == Scope::Delete && contains(workspace) {
        let is_root = workspace.is_some_and(|w| w.components.len() == dir.components.len());
        return Some(if is_root {
            Protected::Workspace(display)
        } else {
            Protected::WorkspaceAncestor(display)
        });
    }
    if let [top] = dir.components.as_slice()
        && SYSTEM_DIRS.contains(&top.as_str())
    {
        return Some(Protected::TopLevel(display));
    }
    None
}

/// Directories under `/` that hold the system; other top-level names (`/app`, `/data`) are
/// ordinary directories.
const SYSTEM_DIRS: [&str; 21] = [
    "bin", "boot", "dev", "etc", "home", "lib", "lib32", "lib64", "libx32", "media", "mnt", "opt",
    "proc", "root", "run", "sbin", "srv", "sys", "tmp", "usr", "var",
];

/// Directories directly in home whose loss cannot be undone or locks the person out: keys,
/// credentials, configuration. Caches (`~/.cache`, `~/.cargo`, `~/.npm`) are not here:
/// deleting them is ordinary cleanup.
const HOME_KEYS: [&str; 11] = [
    ".ssh",
    ".gnupg",
    ".config",
    ".local",
    ".aws",
    ".azure",
    ".kube",
    ".docker",
    ".password-store",
    ".mozilla",
    ".pki",
];

/// Whether a command acts on a directory itself or on everything in it (`dir/*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Contents {
    /// The directory itself.
    Itself,
    /// Everything in it, through a glob.
    Everything,
}

/// Whether writing to `path` writes straight to a disk or to kernel memory.
pub(crate) fn is_block_device(path: &AbsPath) -> bool {
    const DISK_PREFIXES: [&str; 14] = [
        "sd", "hd", "vd", "xvd", "nvme", "mmcblk", "loop", "md", "dm-", "nbd", "rbd", "zd", "sr",
        "ubd",
    ];
    const DISK_DIRS: [&str; 3] = ["disk", "mapper", "block"];
    const MEMORY: [&str; 4] = ["mem", "kmem", "port", "root"];
    if path.anchor != Anchor::Root {
        return false;
    }
    match path.components.as_slice() {
        [dev, name] if dev == "dev" => {
            DISK_PREFIXES.iter().any(|p| name.starts_with(p)) || MEMORY.contains(&name.as_str())
        }
        [dev, dir, ..] if dev == "dev" => DISK_DIRS.contains(&dir.as_str()),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn abs(text: &str) -> AbsPath {
        resolve(text, None).unwrap_or_else(|| panic!("{text} is not absolute"))
    }

    #[test]
    fn dot_dot_never_climbs_above_root() {
        assert_eq!(abs("/tmp/../../").display(), "/");
        assert_eq!(abs("//usr/./bin/").display(), "/usr/bin");
    }

    #[test]
    fn protection_of_places_and_their_contents() {
        let home = abs("/home/me");
        let ws = abs("/home/me/proj");
        let check =
            |p: &str| protection(&abs(p), Some(&home), Some(&ws), Scope::Delete).map(|(p, _)| p);
        assert_eq!(check("/"), Some(Protected::Root));
        assert_eq!(check(&format!("/{}", glob::ANY)), Some(Protected::Root));
        assert_eq!(
            check(&format!(
                "/{}a-z{}{}",
                glob::CLASS_START,
                glob::CLASS_END,
                glob::ANY
            )),
            Some(Protected::Root)
        );
        assert_eq!(
            check(&format!("/h{}/me", glob::ANY)),
            Some(Protected::Home("/home/me".into()))
        );
        assert_eq!(check("/proc/self/root/"), Some(Protected::Root));
        assert_eq!(
            check("/proc/1/task/1/root/usr"),
            Some(Protected::TopLevel("/usr".into()))
        );
        assert_eq!(check("/usr"), Some(Protected::TopLevel("/usr".into())));
        assert_eq!(check("/home/me/"), Some(Protected::Home("/home/me".into())));
        assert_eq!(
            check("/home"),
            Some(Protected::HomeAncestor("/home".into()))
        );
        assert_eq!(
            check("/home/me/proj/."),
            Some(Protected::Workspace("/home/me/proj".into()))
        );
        assert_eq!(check("/home/me/proj/build"), None);
        assert_eq!(check("/app"), None);
        assert_eq!(check("/home/me/.cache"), None);
        assert_eq!(
            check("/home/me/.ssh/"),
            Some(Protected::HomeKeys("/home/me/.ssh".into()))
        );
        assert_eq!(
            check("/home/me/proj/.git"),
            Some(Protected::Repository("/home/me/proj/.git".into()))
        );
        assert_eq!(check("/home/me/proj/sub/.git"), None);
        assert_eq!(check("/home/me/.ssh/known_hosts"), None);
        assert_eq!(check(&format!("/home/me/proj/{}.o", glob::ANY)), None);
        assert_eq!(check(&format!("/tmp/{}.log", glob::ANY)), None);
    }

    #[test]
    fn block_devices() {
        assert!(is_block_device(&abs("/dev/sda")));
        assert!(is_block_device(&abs("/dev/../dev/nvme0n1p1")));
        assert!(is_block_device(&abs("/dev/disk/by-id/x")));
        assert!(!is_block_device(&abs("/dev/null")));
        assert!(!is_block_device(&abs("/dev/ttyUSB0")));
        assert!(!is_block_device(&abs("/dev/shm/x")));
    }
}
