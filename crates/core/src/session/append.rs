//! Appending whole records to a file that may refuse some writes (a full disk, a quota): the
//! file only ever holds complete records, in order, and a record that could not be written
//! waits in memory until a later write or [`AppendLog::catch_up`] gets it on disk.

use std::fs::File;
use std::io::{self, Write};

/// What the log needs of its file; a fake in the tests.
pub(crate) trait LogFile {
    /// Appends `bytes` at the end; on error, any part of them may have been written.
    fn append(&mut self, bytes: &[u8]) -> io::Result<()>;
    /// Cuts the file to `len` bytes.
    fn truncate(&mut self, len: u64) -> io::Result<()>;
}

impl LogFile for File {
    fn append(&mut self, bytes: &[u8]) -> io::Result<()> {
        // The file is opened for appending: every write lands at the current end.
        self.write_all(bytes)?;
        self.flush()
    }

    fn truncate(&mut self, len: u64) -> io::Result<()> {
        self.set_len(len)
    }
}

/// Complete records on disk, and those still waiting to get there.
#[derive(Debug)]
pub(crate) struct AppendLog<F> {
    file: F,
    /// The length of the file's complete records.
    durable_len: u64,
    /// Records (each ending in a newline) that a failed write kept off the disk, in order.
    pending: Vec<u8>,
    /// A failed write may have left part of a record after `durable_len`.
    torn_tail: bool,
}

impl<F: LogFile> AppendLog<F> {
    /// A log over `file`, whose first `len` bytes are complete records.
    pub(crate) fn new(file: F, len: u64) -> Self {
        AppendLog {
            file,
            durable_len: len,
            pending: Vec::new(),
            torn_tail: false,
        }
    }

    /// Appends one record (ending in a newline). On error the record is kept, with every
    /// earlier one still waiting, and written first by the next call that succeeds.
    pub(crate) fn append(&mut self, record: &[u8]) -> io::Result<()> {
        self.pending.extend_from_slice(record);
        self.catch_up()
    }

    /// Writes every waiting record. On error they stay waiting and the file keeps only its
    /// complete records.
    pub(crate) fn catch_up(&mut self) -> io::Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        if self.torn_tail {
            self.file.truncate(self.durable_len)?;
            self.torn_tail = false;
        }
        match self.file.append(&self.pending) {
            Ok(()) => {
                self.durable_len += self.pending.len() as u64;
                self.pending.clear();
                Ok(())
            }
            Err(error) => {
                // Never leave half a record for the next one to follow.
                self.torn_tail = self.file.truncate(self.durable_len).is_err();
                Err(error)
            }
        }
    }

    /// Records waiting to be written.
    pub(crate) fn pending_records(&self) -> usize {
        self.pending.iter().filter(|&&b| b == b'\n').count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file that holds at most `room` bytes, like a nearly full disk.
    #[derive(Debug, Default)]
    struct SmallDisk {
        bytes: Vec<u8>,
        room: usize,
        truncate_fails: bool,
    }

    impl LogFile for SmallDisk {
        fn append(&mut self, bytes: &[u8]) -> io::Result<()> {
            let fits = self.room.saturating_sub(self.bytes.len()).min(bytes.len());
            self.bytes.extend_from_slice(&bytes[..fits]);
            if fits < bytes.len() {
                return Err(io::Error::new(io::ErrorKind::StorageFull, "disk full"));
            }
            Ok(())
        }

        fn truncate(&mut self, len: u64) -> io::Result<()> {
            if self.truncate_fails {
                return Err(io::Error::other("cannot truncate"));
            }
            self.bytes.truncate(usize::try_from(len).unwrap());
            Ok(())
        }
    }

    fn disk(room: usize) -> AppendLog<SmallDisk> {
        AppendLog::new(
            SmallDisk {
                room,
                ..SmallDisk::default()
            },
            0,
        )
    }

    #[test]
    fn a_failed_write_leaves_no_half_record_and_keeps_the_record() {
        let mut log = disk(10);
        log.append(b"one\n").unwrap();
        assert!(log.append(b"second record\n").is_err());
        assert_eq!(log.file.bytes, b"one\n", "the torn part is cut off");
        assert_eq!(log.pending_records(), 1);
        assert!(log.append(b"3\n").is_err(), "still no room");
        assert_eq!(log.file.bytes, b"one\n");
        assert_eq!(log.pending_records(), 2);

        log.file.room = 100; // Space was freed.
        log.append(b"four\n").unwrap();
        assert_eq!(
            log.file.bytes, b"one\nsecond record\n3\nfour\n",
            "all, in order"
        );
        assert_eq!(log.pending_records(), 0);
    }

    #[test]
    fn a_torn_tail_that_could_not_be_cut_is_cut_before_the_next_write() {
        let mut log = disk(6);
        log.append(b"one\n").unwrap();
        log.file.truncate_fails = true;
        assert!(log.append(b"two\n").is_err());
        assert_eq!(log.file.bytes, b"one\ntw");
        log.file.truncate_fails = false;
        log.file.room = 100;
        log.catch_up().unwrap();
        assert_eq!(log.file.bytes, b"one\ntwo\n");
    }

    #[test]
    fn catching_up_with_nothing_waiting_writes_nothing() {
        let mut log = disk(0);
        log.catch_up().unwrap();
        assert!(log.file.bytes.is_empty());
    }
}
