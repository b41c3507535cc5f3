//! [`Sink`]: what the engine hands the fragments of the selected
//! partitions to.

use std::io;

use super::{Error, Table};
use crate::data::{LazyRow, RangeTombstoneMarker, Row};
use crate::deletion::DeletionTime;

/// A consumer of the fragments of the selected partitions. Every method has
/// a do-nothing default so a renderer implements only what it prints.
pub trait Sink {
    /// Whether the sink takes the partition of `key`, asked after the
    /// selection wants it and before it is decoded: a partition declined is
    /// stepped over by its size fields and not counted as written. The
    /// reads of one sstable ask ([`run`](super::run), forward or reversed,
    /// [`run_unit`](super::run_unit), and [`run_rows`](super::run_rows) for
    /// each part), and so does a merged [`dump`](super::MergeInputs::dump)
    /// (once the merger has started the partition) but for its reversed
    /// point lookups; the other merged reads do not.
    fn takes_partition(&mut self, _t: &Table<'_>, _key: &[u8]) -> io::Result<bool> {
        Ok(true)
    }
    /// A partition starts. `header_end` is where its static row ends (or its
    /// header, without static row): sstabledump's partition position.
    fn partition_start(
        &mut self,
        _t: &Table<'_>,
        _key: &[u8],
        _deletion: &DeletionTime,
        _header_end: u64,
    ) -> io::Result<()> {
        Ok(())
    }
    /// The static row (possibly empty).
    fn static_row(&mut self, _t: &Table<'_>, _row: &Row<'_>, _position: u64) -> io::Result<()> {
        Ok(())
    }
    /// The rows of a later part of a partition come next
    /// ([`run_rows`](super::run_rows) from a row-index block): the
    /// partition's start and static row were fed for the sink's state, and
    /// the rows that follow continue a partition another sink began.
    fn rows_resume(&mut self) -> io::Result<()> {
        Ok(())
    }
    /// A clustered row.
    fn row(&mut self, _t: &Table<'_>, _row: &Row<'_>) -> io::Result<()> {
        Ok(())
    }
    /// True when clustered rows are to come through [`Sink::lazy_row`]
    /// (rendered as they are decoded) rather than [`Sink::row`].
    fn takes_lazy_rows(&self) -> bool {
        false
    }
    /// A clustered row whose columns are decoded as the sink consumes them
    /// ([`Row::visit`]); only called when [`Sink::takes_lazy_rows`].
    /// On a decoding error the sink takes back what it wrote of the row
    /// and returns the error. The default decodes the row whole and hands
    /// it to [`Sink::row`].
    fn lazy_row(&mut self, t: &Table<'_>, row: LazyRow<'_>) -> Result<(), Error> {
        let row = row.into_decoded()?;
        Ok(self.row(t, &row)?)
    }
    /// A range tombstone bound or boundary.
    fn marker(&mut self, _t: &Table<'_>, _m: &RangeTombstoneMarker<'_>) -> io::Result<()> {
        Ok(())
    }
    /// The partition ends.
    fn partition_end(&mut self, _t: &Table<'_>) -> io::Result<()> {
        Ok(())
    }
    /// Decoding failed inside the partition: close what is open.
    fn abort_partition(&mut self, t: &Table<'_>) -> io::Result<()> {
        self.partition_end(t)
    }
    /// False when the partition just ended printed nothing (a filter in the
    /// sink dropped it); [`Shape::limit`](super::Shape::limit) counts
    /// partitions that printed something.
    fn last_partition_written(&self) -> bool {
        true
    }
    /// [`Shape::keys_only`](super::Shape::keys_only): one partition key.
    fn key_only(&mut self, _t: &Table<'_>, _key: &[u8]) -> io::Result<()> {
        Ok(())
    }
}

/// Passes one partition, read as several slices one call after another,
/// on as one: its header and static row from the first call that starts
/// it, the rows and markers of every call, and its end once
/// ([`JoinSlices::finish`]). Counts the rows, for a limit over all slices.
pub(crate) struct JoinSlices<'s> {
    inner: &'s mut dyn Sink,
    /// A call before this one started the partition.
    header_out: bool,
    started: bool,
    ended: bool,
    /// Clustered rows passed on.
    pub(crate) rows: u64,
}

impl<'s> JoinSlices<'s> {
    pub(crate) fn new(inner: &'s mut dyn Sink) -> Self {
        JoinSlices {
            inner,
            header_out: false,
            started: false,
            ended: false,
            rows: 0,
        }
    }

    /// The next slice's call begins.
    pub(crate) fn next_call(&mut self) {
        self.header_out = self.started;
    }

    /// End the partition, if a call ended it.
    pub(crate) fn finish(self, t: &Table<'_>) -> io::Result<()> {
        if self.ended {
            self.inner.partition_end(t)?;
        }
        Ok(())
    }
}

impl Sink for JoinSlices<'_> {
    fn takes_partition(&mut self, t: &Table<'_>, key: &[u8]) -> io::Result<bool> {
        self.inner.takes_partition(t, key)
    }
    fn partition_start(
        &mut self,
        t: &Table<'_>,
        key: &[u8],
        deletion: &DeletionTime,
        header_end: u64,
    ) -> io::Result<()> {
        self.started = true;
        if self.header_out {
            return Ok(());
        }
        self.inner.partition_start(t, key, deletion, header_end)
    }
    fn static_row(&mut self, t: &Table<'_>, row: &Row<'_>, position: u64) -> io::Result<()> {
        if self.header_out {
            return Ok(());
        }
        self.inner.static_row(t, row, position)
    }
    fn rows_resume(&mut self) -> io::Result<()> {
        self.inner.rows_resume()
    }
    fn row(&mut self, t: &Table<'_>, row: &Row<'_>) -> io::Result<()> {
        self.rows += 1;
        self.inner.row(t, row)
    }
    fn takes_lazy_rows(&self) -> bool {
        self.inner.takes_lazy_rows()
    }
    fn lazy_row(&mut self, t: &Table<'_>, row: LazyRow<'_>) -> Result<(), Error> {
        self.rows += 1;
        self.inner.lazy_row(t, row)
    }
    fn marker(&mut self, t: &Table<'_>, m: &RangeTombstoneMarker<'_>) -> io::Result<()> {
        self.inner.marker(t, m)
    }
    fn partition_end(&mut self, _t: &Table<'_>) -> io::Result<()> {
        self.ended = true;
        Ok(())
    }
    fn abort_partition(&mut self, t: &Table<'_>) -> io::Result<()> {
        self.inner.abort_partition(t)
    }
    fn last_partition_written(&self) -> bool {
        self.inner.last_partition_written()
    }
    fn key_only(&mut self, t: &Table<'_>, key: &[u8]) -> io::Result<()> {
        self.inner.key_only(t, key)
    }
}
