//! The public cursors: [`ScanReader`] over the whole Data.db and
//! [`PartitionReader`] over one partition, both over the reader's `Inner`.

use std::path::Path;

use crate::compare::OwnedPrefix;
use crate::error::{Error, ErrorKind, Result};
use crate::sstable::Sstable;
use crate::statistics::SerializationHeader;
use crate::version::Features;

use crate::data::decode::{self, Spare};
use crate::data::legacy::Layout;
use crate::data::model::{Fragment, LazyRow};
use crate::data::schema::DataSchema;
use crate::data::source::DataSource;
use crate::data::DataPos;

use super::{make_inner, open_source, Finding, Inner, Plan, ReaderOptions, State};

/// What [`ScanReader::next_or_hold`] read.
// Matched where it is returned, never stored: boxing the fragment would
// allocate per fragment for nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum Next<'a> {
    /// A clustered row, its clustering copied out; true when it has a row
    /// marker or a deletion.
    Held {
        /// The row has a row marker or a deletion.
        marked: bool,
    },
    /// Anything else (and rows of pre-3.0 files).
    Fragment(Fragment<'a, LazyRow<'a>>),
}

/// Forward reader over all partitions of a Data.db (see the module docs).
pub struct ScanReader<'s> {
    inner: Inner<'s>,
}

impl std::fmt::Debug for ScanReader<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScanReader")
            .field("source", &self.inner.src)
            .field("state", &self.inner.state)
            .finish()
    }
}

impl<'s> ScanReader<'s> {
    /// A reader over the Data.db of `sst`, decoded with `header` (the
    /// serialization header from Statistics.db), starting at position 0.
    pub fn new(sst: &'s Sstable, header: &SerializationHeader) -> Result<ScanReader<'s>> {
        Self::with_options(sst, header, ReaderOptions::default())
    }

    /// [`ScanReader::new`] with options.
    pub fn with_options(
        sst: &'s Sstable,
        header: &SerializationHeader,
        opts: ReaderOptions,
    ) -> Result<ScanReader<'s>> {
        let (src, layout) = open_source(sst)?;
        Ok(ScanReader {
            inner: make_inner(src, layout, header, sst.features(), opts),
        })
    }

    /// A reader over an in-memory, uncompressed Data.db (tests, fuzzing).
    pub fn from_bytes(
        bytes: &'s [u8],
        header: &SerializationHeader,
        features: Features,
        opts: ReaderOptions,
    ) -> ScanReader<'s> {
        ScanReader {
            inner: Inner::new(DataSource::from_bytes(bytes), header, features, opts),
        }
    }

    /// A reader over an in-memory, uncompressed `ka`/`la` Data.db of table
    /// `schema` (tests, fuzzing); `features` of a legacy version.
    pub fn legacy_from_bytes(
        bytes: &'s [u8],
        schema: &crate::schema::TableSchema,
        features: Features,
        opts: ReaderOptions,
    ) -> ScanReader<'s> {
        let header = crate::data::legacy::legacy_header(schema);
        ScanReader {
            inner: Inner::new(DataSource::from_bytes(bytes), &header, features, opts)
                .with_legacy(Layout::of(schema)),
        }
    }

    /// True when this reader decodes the pre-3.0 cell format (`ka`/`la`).
    pub fn is_legacy(&self) -> bool {
        self.inner.legacy.is_some()
    }

    /// Bytes of the partition-end marker: 1 (`END_OF_PARTITION`), 2 in the
    /// legacy format (`0x0000`).
    pub fn end_marker_len(&self) -> u64 {
        if self.is_legacy() {
            2
        } else {
            1
        }
    }

    /// Where the fragment [`ScanReader::next_fragment`] returns next
    /// starts. The row format decodes in place, so that is
    /// [`ScanReader::position`]; the legacy decoder groups cells into rows
    /// and may have decoded ahead (it decodes the next fragment here when
    /// needed). After an error: the current position (the reader is fused).
    pub fn next_position(&mut self) -> DataPos {
        if self.inner.legacy.is_none() || self.inner.failed.get() {
            return self.inner.src.position();
        }
        match self.inner.legacy_peek() {
            Ok(Some(p)) => p,
            Ok(None) => self.inner.src.position(),
            Err(e) => {
                let _ = self.inner.fail(e);
                self.inner.src.position()
            }
        }
    }

    /// The next fragment, `Ok(None)` at the end of the data (or after an error).
    pub fn next_fragment(&mut self) -> Result<Option<Fragment<'_>>> {
        self.inner.next_fragment()
    }

    /// [`ScanReader::next_fragment`], with rows (static or clustered) left
    /// undecoded past their head ([`LazyRow`]): a caller that renders
    /// cells as they are decoded ([`Row::visit`](crate::data::Row::visit)) skips
    /// building a decoded [`Row`](crate::data::Row). Rows of legacy (pre-3.0)
    /// files come decoded already, in the same form.
    pub fn next_lazy(&mut self) -> Result<Option<Fragment<'_, LazyRow<'_>>>> {
        self.inner.next_lazy()
    }

    /// [`ScanReader::next_lazy`] for a merge: a clustered row is returned;
    /// anything else, or `None` at the end, is given to `other` (and
    /// `Ok(None)` returned).
    pub fn next_row_or(
        &mut self,
        other: impl FnOnce(Option<Fragment<'_, LazyRow<'_>>>) -> Result<()>,
    ) -> Result<Option<LazyRow<'_>>> {
        self.inner.next_row_or(other)
    }

    /// [`ScanReader::next_lazy`] for a merge, which holds rows back: a
    /// clustered row is stepped over with only its clustering decoded (into
    /// `key`); [`ScanReader::last_row`] decodes it when it is needed.
    pub fn next_or_hold(&mut self, key: &mut OwnedPrefix) -> Result<Option<Next<'_>>> {
        self.inner.next_or_hold(key)
    }

    /// The clustered row the last `next_fragment`, `next_lazy` or `next_or_hold` returned,
    /// decoded again, lazily, from the bytes still in the window; `None` when
    /// the last fragment was not a clustered row, the reader has moved since
    /// (any other call that reads or seeks), or the file is pre-3.0. A merge
    /// keeps only a row's clustering while it waits and renders the row from
    /// here when no other sstable has a version of it.
    pub fn last_row(&self) -> Result<Option<LazyRow<'_>>> {
        let Some(plan) = self.inner.last_row else {
            return Ok(None);
        };
        if self.inner.failed.get() || self.inner.legacy.is_some() {
            return Ok(None);
        }
        match plan {
            Plan::Row { len } => self.inner.row_behind(len).map(Some),
            _ => Ok(None),
        }
    }

    /// [`ScanReader::last_row`], an error when there is none (the merge's
    /// held row).
    pub fn held_row(&self) -> Result<LazyRow<'_>> {
        match self.inner.last_row {
            Some(Plan::Row { len }) if !self.inner.failed.get() && self.inner.legacy.is_none() => {
                self.inner.row_behind(len)
            }
            _ => Err(Error::new(
                ErrorKind::BadValue("the held row is no longer in its reader".into()),
                "merge",
            )),
        }
    }

    /// Keep the head of the row [`ScanReader::next_lazy`] just returned
    /// (its [`LazyRow::head`]): [`ScanReader::last_row`] then builds the row
    /// from it without parsing it again.
    pub fn keep_head(&mut self, head: Option<decode::RowHead>) {
        if matches!(self.inner.last_row, Some(Plan::Row { .. })) {
            self.inner.held = head;
        }
    }

    /// Skip the rest of the current partition (or, between partitions, the
    /// whole next one) using the size fields only: cells are not decoded and
    /// whole compressed chunks are skipped without being read. Returns
    /// `false` when there was no partition left.
    pub fn skip_partition(&mut self) -> Result<bool> {
        self.inner.skip_partition()
    }

    /// Step over the next fragment using its size fields only (nothing is
    /// decoded past its head): where it started and whether it was the
    /// partition end; `Ok(None)` at the end of the data (or after an
    /// error). Reversed reads ([`crate::read::ReversedReader`]) find where
    /// the rows of a block start with it.
    pub fn skip_fragment(&mut self) -> Result<Option<(DataPos, bool)>> {
        if self.inner.failed.get() {
            return Ok(None);
        }
        if self.inner.legacy.is_some() {
            return Err(self
                .inner
                .legacy_unsupported("skipping a fragment by its size"));
        }
        let at = self.inner.src.position();
        match self.inner.prepare(true) {
            Ok(Some(plan)) => Ok(Some((at, matches!(plan, Plan::End)))),
            Ok(None) => Ok(None),
            Err(e) => Err(self.inner.fail(e)),
        }
    }

    /// Hand back the allocations of a fragment the caller is done with
    /// ([`Fragment::into_spare`]): the next rows and markers reuse them
    /// instead of allocating (a full scan otherwise allocates a few vectors
    /// per row).
    ///
    /// ```ignore
    /// while let Some(f) = reader.next_fragment()? {
    ///     render(&f)?;
    ///     let spare = f.into_spare();
    ///     reader.recycle(spare);
    /// }
    /// ```
    pub fn recycle(&mut self, spare: Spare) {
        self.inner.spare.get_mut().merge(spare);
    }

    /// Continue at the partition starting at `pos` (e.g. from Index.db).
    /// Clears a previous error.
    pub fn seek_partition(&mut self, pos: DataPos) -> Result<()> {
        self.inner.seek_partition(pos)
    }

    /// Continue inside the partition that starts at `partition` (key `key`),
    /// at `pos`: a position where an unfiltered (row or range tombstone
    /// marker) starts, e.g. a promoted-index block. The partition header and
    /// static row are not read (the next fragment is a row, a marker or the
    /// partition end); the first unfiltered's `prev_unfiltered_size` is not
    /// checked. Clears a previous error. Used by bounded reads
    /// ([`crate::read`]).
    pub fn seek_to(&mut self, partition: DataPos, key: &[u8], pos: DataPos) -> Result<()> {
        self.inner.seek_within(partition, key, pos)
    }

    /// Legacy (`ka`/`la`) only: read the atoms in `[start, end)` as the
    /// rest of the partition `key` — a partition start without deletion,
    /// the rows and markers, and a partition end at `end`, no end marker
    /// (range tombstones written after a partition's end marker,
    /// CASSANDRA-10791; see [`crate::scrub`]). Clears a previous error.
    pub fn seek_fragment(&mut self, key: &[u8], start: DataPos, end: DataPos) -> Result<()> {
        if self.inner.legacy.is_none() {
            return Err(Error::new(
                ErrorKind::Unsupported(
                    "partition fragments exist in the pre-3.0 cell format only".into(),
                ),
                "partition fragment",
            ));
        }
        self.inner.last_row = None;
        self.inner.failed.set(false);
        self.inner.state = State::Unfiltered;
        self.inner.key.clear();
        self.inner.key.extend_from_slice(key);
        let schema = &self.inner.schema;
        if let Some(l) = self.inner.legacy.as_deref_mut() {
            l.begin_fragment(key, start.0, end.0, schema);
        }
        let r = self.inner.src.seek(start);
        r.map_err(|e| self.inner.fail(e))
    }

    /// How the following Data.db loads are read ([`DataSource::set_read_kind`]).
    pub fn set_read_kind(&mut self, kind: crate::io::ReadKind) {
        self.inner.src.set_read_kind(kind);
    }

    /// Read size of uncompressed loads outside a planned range.
    pub fn set_block_size(&mut self, n: usize) {
        self.inner.src.set_block_size(n);
    }

    /// Plan the range the next seek reads ([`DataSource::plan`]): loads up to
    /// `end` are made in one request. Call before the seek.
    pub fn plan_read(&mut self, end: Option<DataPos>) {
        self.inner.src.plan(end);
    }

    /// Plan the read of one unit of a read cut into several (threads):
    /// [`ScanReader::plan_read`] up to `end`, and no load read ahead, since
    /// the bytes past `end` are another unit's, read by another handle.
    pub fn plan_unit(&mut self, end: Option<DataPos>) {
        self.plan_read(end);
        self.set_read_kind(crate::io::ReadKind::Point);
    }

    /// End of the loaded window ([`DataSource::loaded_end`]).
    pub fn loaded_end(&self) -> DataPos {
        self.inner.src.loaded_end()
    }

    /// Drop the window (start of an operation; [`DataSource::reset`]).
    pub fn reset_window(&mut self) {
        self.inner.last_row = None;
        self.inner.src.reset();
    }

    /// The uncompressed bytes `[pos, pos + len)` through the reader's
    /// source (a plan set before applies). The reader must be re-positioned
    /// ([`ScanReader::seek_partition`] or [`ScanReader::seek_to`]) before
    /// decoding again.
    pub fn read_bytes(&mut self, pos: DataPos, len: usize) -> Result<Vec<u8>> {
        self.inner.last_row = None;
        self.inner.state = State::Done;
        let r = self.inner.src.read_range(pos, len);
        r.map_err(|e| self.inner.ctx(e))
    }

    /// Position of the next byte to decode.
    pub fn position(&self) -> DataPos {
        self.inner.src.position()
    }

    /// Uncompressed length of Data.db.
    pub fn data_len(&self) -> u64 {
        self.inner.src.data_len()
    }

    /// The compressed chunk holding uncompressed `pos` (None if uncompressed);
    /// use it with an error's offset.
    pub fn chunk_of(&self, pos: u64) -> Option<u64> {
        self.inner.src.chunk_of(pos)
    }

    /// Key of the partition being read (the last one started).
    pub fn partition_key(&self) -> &[u8] {
        &self.inner.key
    }

    /// The decoder's view of the table.
    pub fn schema(&self) -> &DataSchema {
        &self.inner.schema
    }

    /// True after an error (the reader is fused).
    pub fn failed(&self) -> bool {
        self.inner.failed.get()
    }

    /// Findings so far.
    pub fn findings(&self) -> &[Finding] {
        &self.inner.findings
    }

    /// Take the findings so far (and the count of those over the limit).
    pub fn take_findings(&mut self) -> (Vec<Finding>, u64) {
        let dropped = std::mem::take(&mut self.inner.findings_dropped);
        (std::mem::take(&mut self.inner.findings), dropped)
    }

    /// The Data.db path (None for in-memory readers).
    pub fn path(&self) -> Option<&Path> {
        self.inner.src.path()
    }
}

/// Reader of exactly one partition, starting at a known position.
pub struct PartitionReader<'s> {
    inner: Inner<'s>,
}

impl std::fmt::Debug for PartitionReader<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PartitionReader")
            .field("source", &self.inner.src)
            .field("state", &self.inner.state)
            .finish()
    }
}

impl<'s> PartitionReader<'s> {
    /// A reader of the partition starting at `pos` (uncompressed position,
    /// e.g. from Index.db or Partitions.db).
    pub fn new(
        sst: &'s Sstable,
        header: &SerializationHeader,
        pos: DataPos,
    ) -> Result<PartitionReader<'s>> {
        Self::with_options(sst, header, pos, ReaderOptions::default())
    }

    /// [`PartitionReader::new`] with options.
    pub fn with_options(
        sst: &'s Sstable,
        header: &SerializationHeader,
        pos: DataPos,
        opts: ReaderOptions,
    ) -> Result<PartitionReader<'s>> {
        let (src, layout) = open_source(sst)?;
        let mut inner = make_inner(src, layout, header, sst.features(), opts);
        inner.single = true;
        inner.src.seek(pos).map_err(|e| inner.ctx(e))?;
        Ok(PartitionReader { inner })
    }

    /// A reader of the partition at `pos` of an in-memory, uncompressed Data.db.
    pub fn from_bytes(
        bytes: &'s [u8],
        header: &SerializationHeader,
        features: Features,
        pos: DataPos,
        opts: ReaderOptions,
    ) -> Result<PartitionReader<'s>> {
        let mut inner = Inner::new(DataSource::from_bytes(bytes), header, features, opts);
        inner.single = true;
        inner.src.seek(pos)?;
        Ok(PartitionReader { inner })
    }

    /// The next fragment of the partition; `Ok(None)` after its
    /// PartitionEnd (or after an error).
    pub fn next_fragment(&mut self) -> Result<Option<Fragment<'_>>> {
        self.inner.next_fragment()
    }

    /// Skip the rest of the partition using size fields only.
    pub fn skip_rest(&mut self) -> Result<bool> {
        self.inner.skip_partition()
    }

    /// Hand back the allocations of a fragment ([`ScanReader::recycle`]).
    pub fn recycle(&mut self, spare: Spare) {
        self.inner.spare.get_mut().merge(spare);
    }

    /// Position of the next byte to decode.
    pub fn position(&self) -> DataPos {
        self.inner.src.position()
    }

    /// The compressed chunk holding uncompressed `pos` (None if uncompressed).
    pub fn chunk_of(&self, pos: u64) -> Option<u64> {
        self.inner.src.chunk_of(pos)
    }

    /// Findings so far.
    pub fn findings(&self) -> &[Finding] {
        &self.inner.findings
    }

    /// The decoder's view of the table.
    pub fn schema(&self) -> &DataSchema {
        &self.inner.schema
    }
}
