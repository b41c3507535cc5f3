//! [`WriterSink`]: sstable writers as an engine [`Sink`], so the writing
//! commands read their partitions through the query engine
//! ([`engine::run`]) as the read-only commands do.
//!
//! ```text
//! engine::run(sst, Selection::all()) ─► WriterSink ─► Route ─► SstableWriter(s)
//! ```
//!
//! The [`Route`] picks the writer of each partition from its key before
//! the partition is decoded ([`Sink::takes_partition`]); a partition it
//! leaves out is stepped over by its size fields.

use std::io;

use crate::data::{RangeTombstoneMarker, Row};
use crate::deletion::DeletionTime;
use crate::engine::{self, Sink, Table};
use crate::error::{Error, ErrorKind, Result};

use super::SstableWriter;

/// Where each partition goes.
pub trait Route {
    /// Pick the writer of the partition with key `key`; `false` leaves the
    /// partition out. Called once per partition, in the source's order.
    fn pick(&mut self, key: &[u8]) -> Result<bool>;
    /// The writer picked last (`None` before the first pick).
    fn picked(&mut self) -> Option<&mut SstableWriter>;
}

/// One writer, taking the partitions whose key `keep` accepts.
pub struct Keep<'w, F> {
    writer: &'w mut SstableWriter,
    keep: F,
}

impl<'w, F: FnMut(&[u8]) -> bool> Keep<'w, F> {
    /// Route the partitions `keep` accepts to `writer`.
    pub fn new(writer: &'w mut SstableWriter, keep: F) -> Self {
        Keep { writer, keep }
    }
}

impl<F: FnMut(&[u8]) -> bool> Route for Keep<'_, F> {
    fn pick(&mut self, key: &[u8]) -> Result<bool> {
        Ok((self.keep)(key))
    }
    fn picked(&mut self) -> Option<&mut SstableWriter> {
        Some(&mut *self.writer)
    }
}

/// Counts of one copy.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CopyCounts {
    /// Partitions read from the source.
    pub read: u64,
    /// Partitions written.
    pub written: u64,
}

/// The engine sink that writes each partition into the writer its
/// [`Route`] picks, fragment by fragment (the rows as the reader lends
/// them: nothing is copied).
pub struct WriterSink<R> {
    route: R,
    counts: CopyCounts,
    /// The writer's error that stopped the run: the engine carries a sink's
    /// errors as I/O errors, and the command reports this one whole.
    failed: Option<Error>,
}

impl<R: Route> WriterSink<R> {
    /// A sink writing through `route`.
    pub fn new(route: R) -> Self {
        WriterSink {
            route,
            counts: CopyCounts::default(),
            failed: None,
        }
    }

    /// Partitions read (every one the engine offered) and written so far.
    pub fn counts(&self) -> CopyCounts {
        self.counts
    }

    /// The route, with its writers.
    pub fn into_route(self) -> R {
        self.route
    }

    /// The error that stopped a run into this sink, as the writer or the
    /// reader raised it. The partition key the engine adds is left out: the
    /// reader's errors name their file and offset.
    pub fn error(&mut self, e: engine::Error) -> Error {
        match e {
            engine::Error::Read { error, .. } => *error,
            engine::Error::Output(io) => self.failed.take().unwrap_or_else(|| Error::from(io)),
            engine::Error::Usage(m) => Error::new(ErrorKind::Unsupported(m), "copy"),
        }
    }

    /// Keep the writer's error for [`WriterSink::error`]; the engine gets
    /// its text.
    fn fail(&mut self, e: Error) -> io::Error {
        let io = io::Error::other(e.to_string());
        self.failed.get_or_insert(e);
        io
    }

    /// Run `f` on the picked writer.
    fn write(&mut self, f: impl FnOnce(&mut SstableWriter) -> Result<()>) -> io::Result<()> {
        let r = match self.route.picked() {
            Some(w) => f(w),
            None => Err(Error::new(
                ErrorKind::BadValue("a fragment before any partition was routed".into()),
                "fragment order",
            )),
        };
        r.map_err(|e| self.fail(e))
    }
}

impl<R: Route> Sink for WriterSink<R> {
    fn takes_partition(&mut self, _t: &Table<'_>, key: &[u8]) -> io::Result<bool> {
        self.counts.read += 1;
        self.route.pick(key).map_err(|e| self.fail(e))
    }
    fn partition_start(
        &mut self,
        _t: &Table<'_>,
        key: &[u8],
        deletion: &DeletionTime,
        _header_end: u64,
    ) -> io::Result<()> {
        self.write(|w| w.partition_start(key, deletion))
    }
    fn static_row(&mut self, _t: &Table<'_>, row: &Row<'_>, _position: u64) -> io::Result<()> {
        self.write(|w| w.static_row(row))
    }
    fn row(&mut self, _t: &Table<'_>, row: &Row<'_>) -> io::Result<()> {
        self.write(|w| w.row(row))
    }
    fn marker(&mut self, _t: &Table<'_>, m: &RangeTombstoneMarker<'_>) -> io::Result<()> {
        self.write(|w| w.marker(m))
    }
    fn partition_end(&mut self, _t: &Table<'_>) -> io::Result<()> {
        self.write(|w| w.partition_end())?;
        self.counts.written += 1;
        Ok(())
    }
    fn abort_partition(&mut self, _t: &Table<'_>) -> io::Result<()> {
        // The run fails: the unfinished writer is dropped, its files removed.
        Ok(())
    }
}
