//! `results.jsonl`: one line per finished attempt, appended and flushed as each ends, so a run
//! that is killed loses only the attempts still running, and `--resume` redoes just those.

use std::collections::BTreeSet;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use super::record::Record;

/// The results file's name in the output directory.
pub(crate) const RESULTS_FILE: &str = "results.jsonl";

/// The results file, open for appending.
#[derive(Debug)]
pub(crate) struct Results {
    path: PathBuf,
    file: File,
}

impl Results {
    /// Opens (or creates) `dir/results.jsonl`; a last line cut by a crash is dropped, so the
    /// next line starts clean.
    pub(crate) fn open(dir: &Path) -> std::io::Result<Results> {
        let path = dir.join(RESULTS_FILE);
        let mut file = OpenOptions::new()
            .create(true)
            .read(true)
            .append(true)
            .open(&path)?;
        let mut text = Vec::new();
        file.read_to_end(&mut text)?;
        if !text.is_empty() && !text.ends_with(b"\n") {
            let keep = text.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
            file.set_len(keep as u64)?;
            file.seek(SeekFrom::End(0))?;
        }
        Ok(Results { path, file })
    }

    /// Appends one attempt's line and flushes it to disk.
    pub(crate) fn append(&mut self, record: &Record) -> std::io::Result<()> {
        let mut line = record.to_line();
        line.push('\n');
        self.file.write_all(line.as_bytes())?;
        self.file.sync_data()
    }

    /// The file's path.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }
}

/// The attempts in a results file, skipping lines that are not records (a line cut by a
/// crash); a file that does not exist holds none.
pub(crate) fn read(path: &Path) -> std::io::Result<Vec<Record>> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    Ok(text
        .lines()
        .filter_map(|line| serde_json::from_str::<Record>(line).ok())
        .collect())
}

/// The `(task, attempt)` pairs already done.
pub(crate) fn done(records: &[Record]) -> BTreeSet<(String, u32)> {
    records
        .iter()
        .map(|r| (r.task.clone(), r.attempt))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::record::Reason;
    use super::*;

    #[test]
    fn a_line_cut_by_a_crash_is_dropped_and_the_next_starts_clean() {
        let dir = tempfile::tempdir().unwrap();
        let mut results = Results::open(dir.path()).unwrap();
        let mut record = Record::new("a", 1, Path::new("/w"), 0);
        record.reason = Reason::Passed;
        results.append(&record).unwrap();
        drop(results);
        let path = dir.path().join(RESULTS_FILE);
        let mut text = std::fs::read_to_string(&path).unwrap();
        text.push_str("{\"task\":\"b\",\"att");
        std::fs::write(&path, text).unwrap();

        let mut results = Results::open(dir.path()).unwrap();
        results
            .append(&Record::new("c", 1, Path::new("/w"), 0))
            .unwrap();
        let records = read(&path).unwrap();
        let tasks: Vec<&str> = records.iter().map(|r| r.task.as_str()).collect();
        assert_eq!(tasks, ["a", "c"]);
        assert!(done(&records).contains(&("a".to_owned(), 1)));
    }
}
