//! Rewinding: the plan of what a rewind to a turn restores (and what someone else changed
//! since), its diff, and applying it through a journal.

use super::*;

impl Checkpoints {
    /// What rewinding to the point before turn `to_turn` would do, against the workspace now.
    pub fn plan(
        &mut self,
        to_turn: u32,
        scope: RewindScope,
    ) -> Result<RewindPlan, CheckpointError> {
        let turns = self.turns()?;
        let Some(first) = turns.iter().find(|t| t.number == to_turn) else {
            return Err(CheckpointError::NoSuchTurn {
                turn: to_turn,
                turns: turns.len(),
            });
        };
        let mut plan = RewindPlan {
            to_turn,
            scope,
            line: first.line,
            restores: Vec::new(),
            unsaved: Vec::new(),
            ignored: Vec::new(),
            created_dirs: Vec::new(),
        };
        if !scope.code() {
            return Ok(plan);
        }
        let mut warnings = Vec::new();
        let (delta, _lock) =
            self.snapshot(&mut warnings)
                .map_err(|source| CheckpointError::Io {
                    path: self.workspace.clone(),
                    source,
                })?;
        // What the scan took in is saved with the next turn's checkpoint, whole.
        if !delta.is_empty() {
            self.saved.mark_stale();
        }
        let now = self.tree.as_ref();
        // Per path: the state before the first of these turns that changed it, and the
        // state after the last one (what rein left there).
        let mut targets: std::collections::BTreeMap<
            String,
            (Option<FileState>, Option<FileState>),
        > = std::collections::BTreeMap::new();
        // Per directory: whether the first of these turns that touched it created it (it
        // did not exist before) or removed it (it did).
        let mut dirs: std::collections::BTreeMap<&str, bool> = std::collections::BTreeMap::new();
        for turn in turns
            .iter()
            .filter(|t| t.number >= to_turn && !t.code_reverted)
        {
            for dir in &turn.created_dirs {
                dirs.entry(dir).or_insert(true);
            }
            for dir in &turn.removed_dirs {
                dirs.entry(dir).or_insert(false);
            }
            for change in turn.changes.iter().flatten() {
                targets
                    .entry(change.path.clone())
                    .and_modify(|(_, after)| after.clone_from(&change.after))
                    .or_insert_with(|| (change.before.clone(), change.after.clone()));
            }
            plan.unsaved.extend(turn.unsaved.iter().cloned());
            plan.ignored.extend(turn.ignored.iter().cloned());
        }
        plan.ignored.sort();
        plan.ignored.dedup();
        // Deepest first: a path sorts after its parent's.
        // Those still there (a directory someone removed since has nothing to remove).
        plan.created_dirs = (dirs.into_iter().rev())
            .filter(|&(_, created)| created)
            .map(|(dir, _)| dir.to_owned())
            .filter(|dir| {
                std::fs::symlink_metadata(self.workspace.join(dir)).is_ok_and(|m| m.is_dir())
            })
            .collect();
        for (path, (target, left)) in targets {
            let current = now.and_then(|now| now.files.get(&path)).cloned();
            if same(current.as_ref(), target.as_ref()) {
                continue;
            }
            let changed_since = !same(current.as_ref(), left.as_ref());
            plan.restores.push(Restore {
                path,
                target,
                current,
                changed_since,
            });
        }
        Ok(plan)
    }

    /// The change a restore makes, as a unified diff (what is there now → what it gets).
    pub fn diff(&self, restore: &Restore) -> String {
        let now = match &restore.current {
            Some(_) => std::fs::read(self.workspace.join(&restore.path)).unwrap_or_default(),
            None => Vec::new(),
        };
        let then = restore
            .target
            .as_ref()
            .and_then(|t| self.content(t))
            .unwrap_or_default();
        match (std::str::from_utf8(&now), std::str::from_utf8(&then)) {
            (Ok(now), Ok(then)) => similar::TextDiff::from_lines(now, then)
                .unified_diff()
                .context_radius(3)
                .header(&restore.path, &restore.path)
                .to_string(),
            _ => format!("--- {0}\n+++ {0}\n(binary content)\n", restore.path),
        }
    }

    /// The saved bytes of a file state (to show a diff).
    pub fn content(&self, state: &FileState) -> Option<Vec<u8>> {
        state
            .blob
            .as_deref()
            .and_then(|b| self.objects.read(b).ok())
    }

    /// Carries out `plan`: files first (through the journal), then the directories the
    /// turns created and left empty, then the conversation (in `session` when given, else in
    /// the session file opened here), then the log. Returns what it did.
    pub fn apply(
        &mut self,
        plan: &RewindPlan,
        on_changed: OnChanged,
        session: Option<&mut crate::session::Session>,
    ) -> Result<Applied, CheckpointError> {
        let changed = plan.changed_since();
        if on_changed == OnChanged::Refuse && !changed.is_empty() {
            return Err(CheckpointError::ChangedSince(
                changed.into_iter().map(str::to_owned).collect(),
            ));
        }
        let restores: Vec<Restore> = plan
            .restores
            .iter()
            .filter(|r| !(r.changed_since && on_changed == OnChanged::Keep))
            .cloned()
            .collect();
        // Every object must be there before anything is touched.
        for restore in &restores {
            if let Some(target) = &restore.target
                && self.content(target).is_none()
            {
                return Err(CheckpointError::Corrupt(format!(
                    "the saved content of {} is missing",
                    restore.path
                )));
            }
        }
        let journal = Journal {
            session: self.session.clone(),
            workspace: self.workspace.clone(),
            log: self.log_path(),
            record: Record::Rewound {
                id: format!("{:016x}", fastrand::u64(..)),
                to_turn: plan.to_turn,
                code: plan.scope.code(),
                conversation: plan.scope.conversation(),
            },
            conversation_line: plan.scope.conversation().then_some(plan.line),
            files: restores
                .iter()
                .map(|r| (r.path.clone(), r.target.clone()))
                .collect(),
            created_dirs: plan.created_dirs.clone(),
        };
        let journal_path = restore::journal_path(&self.root, &self.session);
        let io_err = |source| CheckpointError::Io {
            path: journal_path.clone(),
            source,
        };
        let _held = restore::write_journal(&journal_path, &journal).map_err(io_err)?;
        restore::apply_files(&self.workspace, &self.objects, &journal.files)?;
        let removed_dirs = restore::remove_empty_dirs(&self.workspace, &journal.created_dirs);
        restore::finish_journal(&self.rein_home, &journal_path, &journal, session)?;
        // The next scan reads what was written; the log has a rewind the turn count must see.
        self.tree = None;
        self.next_turn = None;
        Ok(Applied {
            restores,
            removed_dirs,
        })
    }
}

fn same(a: Option<&FileState>, b: Option<&FileState>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => a.same_content(b),
        _ => false,
    }
}
