//! Symbolic links a recursive delete goes through: `rm -rf x/` deletes what `x` points to
//! when `x` is a symlink (`ln -s / x; rm -rf x/`). Links made earlier in the same command
//! line are remembered; links already on disk are read (`readlink`) for the components a
//! path goes through.

use std::path::Path;

use super::expand::Expanded;
use super::glob;
use super::paths::{AbsPath, Anchor, resolve as resolve_path};
use super::walker::Walker;
use super::words::Word;

/// How many links one path may go through before rein stops following (the kernel's
/// limit is 40; a loop ends here).
const MAX_LINKS_FOLLOWED: usize = 8;

impl Walker {
    /// `ln -s TARGET NAME`, `ln -sf TARGET`, `ln -s -t DIR TARGET...`: remembers where each
    /// link points, for the rest of the command line (in subshells too: the link stays).
    pub(super) fn record_link(&self, args: &[Word]) {
        let mut symbolic = false;
        let mut directory = None;
        let mut operands = Vec::new();
        let mut options_done = false;
        let mut words = args.iter();
        while let Some(word) = words.next() {
            let Expanded::Known(text) = self.expand(word) else {
                return;
            };
            if options_done || !text.starts_with('-') || text == "-" {
                operands.push(glob::display(&text));
                continue;
            }
            match text.as_str() {
                "--" => options_done = true,
                "--symbolic" => symbolic = true,
                "-t" | "--target-directory" => directory = words.next().map(|w| self.expand(w)),
                "-S" | "--suffix" => {
                    words.next();
                }
                t if !t.starts_with("--") => symbolic |= t.contains('s'),
                _ => {}
            }
        }
        if !symbolic {
            return;
        }
        let basename = |t: &str| {
            t.trim_end_matches('/')
                .rsplit('/')
                .next()
                .map(str::to_owned)
        };
        let links: Vec<(String, String)> = match (directory, operands.as_slice()) {
            (Some(Expanded::Known(dir)), targets) => targets
                .iter()
                .filter_map(|t| Some((format!("{dir}/{}", basename(t)?), t.clone())))
                .collect(),
            (Some(_), _) => return,
            (None, [target]) => basename(target)
                .map(|b| (b, target.clone()))
                .into_iter()
                .collect(),
            (None, [target, name]) => vec![(name.clone(), target.clone())],
            (None, _) => return,
        };
        for (name, target) in links {
            let Some(link) = resolve_path(&name, self.cwd.as_ref()) else {
                continue;
            };
            if let Some(target) = resolve_path(&target, Some(&parent(&link))) {
                self.found.borrow_mut().links.push((link, target));
            }
        }
    }

    /// Where the path `text` leads once the symlinks it goes through are followed, when it
    /// goes through one. A last component is followed only when a `/` or `/.` comes after
    /// it (`rm -rf x` deletes the link itself, `rm -rf x/` what it points to).
    pub(super) fn through_links(&self, text: &str) -> Option<AbsPath> {
        let path = resolve_path(text, self.cwd.as_ref())?;
        let trimmed = text.trim_end_matches('/');
        let follow_last = trimmed.len() < text.len() || trimmed.ends_with("/.") || trimmed == ".";
        let mut followed = None;
        let mut path = path;
        let mut last_followed = follow_last;
        for _ in 0..MAX_LINKS_FOLLOWED {
            let Some(next) = self.first_link(&path, last_followed) else {
                break;
            };
            path = next;
            followed = Some(path.clone());
            // What the link pointed to is itself followed as a directory.
            last_followed = true;
        }
        followed
    }

    /// `path` with its first symlink (among the components that are followed) replaced by
    /// where it points.
    fn first_link(&self, path: &AbsPath, follow_last: bool) -> Option<AbsPath> {
        let count = path
            .components
            .len()
            .saturating_sub(usize::from(!follow_last));
        for k in 1..=count {
            let prefix = AbsPath {
                anchor: path.anchor.clone(),
                components: path.components[..k].to_vec(),
            };
            if prefix.components.iter().any(|c| glob::has_glob(c)) {
                return None;
            }
            let target = self.known_link(&prefix).or_else(|| disk_link(&prefix));
            if let Some(mut target) = target {
                target
                    .components
                    .extend(path.components[k..].iter().cloned());
                return Some(target);
            }
        }
        None
    }

    fn known_link(&self, link: &AbsPath) -> Option<AbsPath> {
        let found = self.found.borrow();
        found
            .links
            .iter()
            .rev()
            .find(|(l, _)| l == link)
            .map(|(_, target)| target.clone())
    }
}

/// The target of `link` on disk, when it is a symlink.
fn disk_link(link: &AbsPath) -> Option<AbsPath> {
    if link.anchor != Anchor::Root {
        return None;
    }
    let target = std::fs::read_link(Path::new(&link.display())).ok()?;
    resolve_path(target.to_str()?, Some(&parent(link)))
}

fn parent(path: &AbsPath) -> AbsPath {
    let mut parent = path.clone();
    parent.components.pop();
    parent
}
