//! The search behind grep: ripgrep's regex matcher and searcher over the parallel walk. Each
//! walker thread searches files with its own searcher; results meet in one collector that
//! keeps counts of everything but text only for the first files in path order, so memory stays
//! bounded however many lines match.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

use grep_regex::RegexMatcher;
use grep_searcher::{
    BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkContextKind, SinkMatch,
};
use ignore::{DirEntry, ParallelVisitor, ParallelVisitorBuilder, WalkState};
use parking_lot::Mutex;
use tokio_util::sync::CancellationToken;

use crate::walk::{FilePattern, walker};

/// What to report for each file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Report {
    /// Matching lines with their numbers (and context lines).
    Lines {
        /// Lines of context before and after each match.
        context: usize,
    },
    /// Only whether the file matches.
    Files,
    /// How many lines match.
    Count,
}

/// One line of output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Line {
    /// A matching line.
    Match(u64, Vec<u8>),
    /// A context line.
    Context(u64, Vec<u8>),
    /// A gap between groups of lines.
    Break,
}

/// What one file gave.
#[derive(Debug, Default)]
pub(crate) struct FileHits {
    /// Matching lines in the file.
    pub matches: u64,
    /// The lines kept for display (matches capped, context included).
    pub lines: Vec<Line>,
}

/// Everything a search found.
#[derive(Debug, Default)]
pub(crate) struct Found {
    /// Matching lines in all files.
    pub total_matches: u64,
    /// Files with at least one match.
    pub total_files: u64,
    /// The first files in path order, enough to show `keep` entries.
    pub files: BTreeMap<PathBuf, FileHits>,
    /// Files or directories that could not be read.
    pub unreadable: u64,
    /// Files left unsearched because rules protect them, in path order.
    pub protected: std::collections::BTreeSet<PathBuf>,
}

/// A search request.
#[derive(Debug)]
pub(crate) struct Query<'a> {
    /// Where to search (a directory or one file).
    pub root: &'a Path,
    /// The compiled pattern.
    pub matcher: &'a RegexMatcher,
    /// Only files whose name or path matches this.
    pub include: Option<&'a FilePattern>,
    /// What to report.
    pub report: Report,
    /// Entries (match lines, or files) to keep for display.
    pub keep: usize,
    /// Files not to search (rules protect them).
    pub guard: Option<&'a crate::ReadGuard>,
}

/// Runs the search; `None` when cancelled.
pub(crate) fn search(query: &Query<'_>, cancel: &CancellationToken) -> Option<Found> {
    let collector = Mutex::new(Collector::default());
    let include_hidden = query.include.is_some_and(FilePattern::mentions_hidden);
    let mut builder = Workers {
        query,
        cancel,
        collector: &collector,
    };
    walker(query.root, include_hidden)
        .build_parallel()
        .visit(&mut builder);
    if cancel.is_cancelled() {
        return None;
    }
    Some(collector.into_inner().found)
}

/// The results so far, and the path past which no text is needed any more.
#[derive(Default)]
struct Collector {
    found: Found,
    /// Once the display is full, the last path in it: lines of files sorting after it will
    /// never be shown, so they are only counted.
    cutoff: Option<PathBuf>,
}

struct Workers<'a> {
    query: &'a Query<'a>,
    cancel: &'a CancellationToken,
    collector: &'a Mutex<Collector>,
}

impl<'s> ParallelVisitorBuilder<'s> for Workers<'s> {
    fn build(&mut self) -> Box<dyn ParallelVisitor + 's> {
        let context = match self.query.report {
            Report::Lines { context } => context,
            Report::Files | Report::Count => 0,
        };
        let showing = SearcherBuilder::new()
            .binary_detection(BinaryDetection::quit(0))
            .line_number(true)
            .before_context(context)
            .after_context(context)
            .build();
        let counting = SearcherBuilder::new()
            .binary_detection(BinaryDetection::quit(0))
            .line_number(false)
            .build();
        Box::new(Worker {
            query: self.query,
            cancel: self.cancel,
            collector: self.collector,
            showing,
            counting,
            unreadable: 0,
        })
    }
}

struct Worker<'a> {
    query: &'a Query<'a>,
    cancel: &'a CancellationToken,
    collector: &'a Mutex<Collector>,
    /// Line numbers and context, for files whose lines may be shown.
    showing: Searcher,
    /// Counts only.
    counting: Searcher,
    unreadable: u64,
}

impl Worker<'_> {}

impl ParallelVisitor for Worker<'_> {
    fn visit(&mut self, entry: Result<DirEntry, ignore::Error>) -> WalkState {
        if self.cancel.is_cancelled() {
            return WalkState::Quit;
        }
        let Ok(entry) = entry else {
            self.unreadable += 1;
            return WalkState::Continue;
        };
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            return WalkState::Continue;
        }
        if let Some(include) = self.query.include
            && !include.is_match(self.query.root, entry.path())
        {
            return WalkState::Continue;
        }
        if self
            .query
            .guard
            .is_some_and(|guard| guard.protects(entry.path()))
        {
            self.collector
                .lock()
                .found
                .protected
                .insert(entry.into_path());
            return WalkState::Continue;
        }
        let show = matches!(self.query.report, Report::Lines { .. })
            && self
                .collector
                .lock()
                .cutoff
                .as_deref()
                .is_none_or(|cutoff| entry.path() < cutoff);
        let mut sink = HitSink::new(self.query.report, if show { self.query.keep } else { 0 });
        let searcher = if show {
            &mut self.showing
        } else {
            &mut self.counting
        };
        if searcher
            .search_path(self.query.matcher, entry.path(), &mut sink)
            .is_err()
        {
            self.unreadable += 1;
            return WalkState::Continue;
        }
        if sink.hits.matches > 0 {
            let mut collector = self.collector.lock();
            add(&mut collector, entry.into_path(), sink.hits, self.query);
        }
        WalkState::Continue
    }
}

impl Drop for Worker<'_> {
    fn drop(&mut self) {
        self.collector.lock().found.unreadable += self.unreadable;
    }
}

/// Adds a file's hits, then drops the last files in path order while the others still fill
/// the display.
fn add(collector: &mut Collector, path: PathBuf, hits: FileHits, query: &Query<'_>) {
    let found = &mut collector.found;
    found.total_matches += hits.matches;
    found.total_files += 1;
    let weight = |hits: &FileHits| match query.report {
        Report::Lines { .. } => hits
            .lines
            .iter()
            .filter(|l| matches!(l, Line::Match(..)))
            .count(),
        Report::Files | Report::Count => 1,
    };
    if weight(&hits) == 0
        || collector
            .cutoff
            .as_ref()
            .is_some_and(|cutoff| &path > cutoff)
    {
        return;
    }
    found.files.insert(path, hits);
    let mut kept: usize = found.files.values().map(weight).sum();
    while let Some((_, last)) = found.files.last_key_value() {
        let last_weight = weight(last);
        if found.files.len() <= 1 || kept - last_weight < query.keep {
            break;
        }
        kept -= last_weight;
        found.files.pop_last();
    }
    if kept >= query.keep {
        collector.cutoff = found.files.last_key_value().map(|(path, _)| path.clone());
    }
}

/// Collects one file's hits.
struct HitSink {
    report: Report,
    keep: usize,
    hits: FileHits,
    kept: usize,
    /// After-context lines still to keep once the cap is reached.
    trailing: usize,
}

impl HitSink {
    fn new(report: Report, keep: usize) -> Self {
        HitSink {
            report,
            keep,
            hits: FileHits::default(),
            kept: 0,
            trailing: 0,
        }
    }

    fn keeping(&self) -> bool {
        matches!(self.report, Report::Lines { .. }) && self.kept < self.keep
    }
}

impl Sink for HitSink {
    type Error = io::Error;

    fn matched(&mut self, _searcher: &Searcher, mat: &SinkMatch<'_>) -> Result<bool, io::Error> {
        self.hits.matches += 1;
        if self.keeping() {
            self.hits.lines.push(Line::Match(
                mat.line_number().unwrap_or(0),
                mat.bytes().to_vec(),
            ));
            self.kept += 1;
            self.trailing = match self.report {
                Report::Lines { context } => context,
                Report::Files | Report::Count => 0,
            };
        } else {
            self.trailing = 0;
        }
        // One match is enough to list a file.
        Ok(self.report != Report::Files)
    }

    fn context(
        &mut self,
        _searcher: &Searcher,
        context: &SinkContext<'_>,
    ) -> Result<bool, io::Error> {
        let after = matches!(context.kind(), SinkContextKind::After);
        if self.keeping() || (after && self.trailing > 0) {
            self.hits.lines.push(Line::Context(
                context.line_number().unwrap_or(0),
                context.bytes().to_vec(),
            ));
        }
        if after {
            self.trailing = self.trailing.saturating_sub(1);
        }
        Ok(true)
    }

    fn context_break(&mut self, _searcher: &Searcher) -> Result<bool, io::Error> {
        if self.keeping() && !self.hits.lines.is_empty() {
            self.hits.lines.push(Line::Break);
        }
        Ok(true)
    }
}
