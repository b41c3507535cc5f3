//! Lazy, fallible, lending cursors over Data.db fragments.
//!
//! * [`ScanReader`]: forward over the whole file (or from a partition
//!   position, [`ScanReader::seek_partition`]).
//! * [`PartitionReader`]: exactly one partition at a position given by an index.
//!
//! Both hand out [`Fragment`]s with
//! `next_fragment() -> Result<Option<Fragment<'_>>>`. A fragment borrows the
//! reader's window, so it must be dropped before the next call (a lending
//! cursor; `Iterator` cannot express that). After the first error the reader
//! is *fused*: every later call returns `Ok(None)`, so corrupt input cannot
//! make a caller loop forever. [`ScanReader::seek_partition`] clears that state.
//!
//! Each call is two steps (see the private `decode` module): *measure* the next
//! unfiltered's head, growing the window until the head fits, then make sure
//! its whole length is loaded, step over it, and decode it from the bytes
//! just stepped over. The measure step is also where the validation that
//! needs no body happens: ordering of the static row, and (option
//! [`ReaderOptions::check_prev_sizes`]) `prev_unfiltered_size` against the
//! real distance, reported as [`Finding`]s rather than errors.
//!
//! Errors carry the file, component Data, the uncompressed offset and the
//! partition key being read (hex); for compressed files
//! [`ScanReader::chunk_of`] maps the offset to its chunk.
//!
//! Expected IO: a full scan reads Data.db once, sequentially (64 KiB blocks
//! or one read per compressed chunk) plus CompressionInfo.db once;
//! [`ScanReader::skip_partition`] skips whole chunks it does not need.

use std::cell::{Cell as Flag, RefCell};

use crate::compare::OwnedPrefix;
use crate::component::Component;
use crate::error::{Error, ErrorKind, Result};
use crate::sstable::Sstable;
use crate::statistics::SerializationHeader;
use crate::version::Features;

use super::decode::{self, Head, RowHome, Spare};
use super::legacy::{Layout, LegacyState, Step};
use super::model::{Fragment, LazyRow};
use super::schema::DataSchema;
use super::source::{DataSource, DEFAULT_BLOCK_SIZE, DEFAULT_MAX_WINDOW};
use super::DataPos;

mod cursors;

pub use cursors::{Next, PartitionReader, ScanReader};

/// Reader options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReaderOptions {
    /// Compare every `prev_unfiltered_size` with the real distance to the
    /// previous unfiltered and record mismatches as [`Finding`]s.
    pub check_prev_sizes: bool,
    /// Largest unfiltered (row or marker) accepted, in bytes; bounds memory
    /// against corrupt size fields.
    pub max_unfiltered_size: u64,
    /// Read size for uncompressed Data.db.
    pub block_size: usize,
    /// At most this many findings are kept (the rest are only counted).
    pub max_findings: usize,
}

impl Default for ReaderOptions {
    fn default() -> Self {
        ReaderOptions {
            check_prev_sizes: true,
            max_unfiltered_size: DEFAULT_MAX_WINDOW,
            block_size: DEFAULT_BLOCK_SIZE,
            max_findings: 1000,
        }
    }
}

/// A validation finding: something inconsistent that does not stop decoding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// Position of the unfiltered concerned.
    pub position: DataPos,
    /// Start of its partition.
    pub partition: DataPos,
    /// What is wrong.
    pub kind: FindingKind,
}

/// The kinds of [`Finding`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum FindingKind {
    /// `prev_unfiltered_size` differs from the distance to the previous
    /// unfiltered (or to the partition start for the first one; 0 for the
    /// static row) (§3.4).
    PrevUnfilteredSize {
        /// Value stored in the file.
        stored: u64,
        /// Value implied by the positions.
        expected: u64,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Between partitions: a partition header (or the end of the data) is next.
    PartitionStart,
    /// After the header of a partition whose table has static columns.
    StaticRow,
    /// Inside a partition.
    Unfiltered,
    /// Nothing more to read.
    Done,
}

#[derive(Debug, Clone, Copy)]
enum Plan {
    PartitionStart { len: usize },
    Static { len: usize },
    Row { len: usize },
    Marker { len: usize },
    End,
}

/// The shared machinery of both readers.
struct Inner<'s> {
    src: DataSource<'s>,
    schema: DataSchema,
    opts: ReaderOptions,
    state: State,
    failed: Flag<bool>,
    /// Stop after one partition (PartitionReader).
    single: bool,
    /// Key of the partition being read (error context), reused buffer.
    key: Vec<u8>,
    partition_start: u64,
    /// Start of the previous non-static unfiltered, or the partition start.
    prev_start: u64,
    findings: Vec<Finding>,
    findings_dropped: u64,
    /// False right after [`Inner::seek_within`]: the previous unfiltered was
    /// not read, so the next `prev_unfiltered_size` cannot be checked.
    check_next_prev: bool,
    /// Allocations handed back by the caller ([`ScanReader::recycle`]) for
    /// the next rows. A `RefCell` because decoding borrows the reader
    /// immutably (see `next_fragment`).
    spare: RefCell<Spare>,
    /// `ka`/`la`: the cell-based decoder (see [`super::super::legacy`]); the
    /// row-format machinery above is then unused except for the source,
    /// schema, state and error context.
    legacy: Option<Box<LegacyState>>,
    /// The clustered row just stepped over, while its bytes are still
    /// behind the source's position ([`ScanReader::last_row`]).
    last_row: Option<Plan>,
    /// The head of `last_row` as first parsed, when kept
    /// ([`ScanReader::keep_head`]): it is then not parsed again.
    held: Option<decode::RowHead>,
}

/// Lowercase hex with a `0x` prefix (error context for partition keys).
fn hex(b: &[u8]) -> String {
    let mut s = String::with_capacity(2 + 2 * b.len());
    s.push_str("0x");
    for x in b {
        s.push_str(&format!("{x:02x}"));
    }
    s
}

fn is_short_read(e: &Error) -> Option<u64> {
    // How many bytes, from the error's offset, the decoder wanted.
    match e.kind {
        ErrorKind::UnexpectedEof { need, .. } => Some(need),
        ErrorKind::LengthOutOfRange { len, .. } => Some(len),
        _ => None,
    }
}

impl<'s> Inner<'s> {
    fn new(
        mut src: DataSource<'s>,
        header: &SerializationHeader,
        features: Features,
        opts: ReaderOptions,
    ) -> Self {
        src.set_block_size(opts.block_size);
        src.set_max_window(opts.max_unfiltered_size);
        Inner {
            src,
            schema: DataSchema::new(header, features),
            opts,
            state: State::PartitionStart,
            failed: Flag::new(false),
            single: false,
            key: Vec::new(),
            partition_start: 0,
            prev_start: 0,
            findings: Vec::new(),
            findings_dropped: 0,
            check_next_prev: true,
            spare: RefCell::new(Spare::default()),
            legacy: None,
            last_row: None,
            held: None,
        }
    }

    /// Switch to the legacy cell decoder for a table of layout `layout`.
    fn with_legacy(mut self, layout: Layout) -> Self {
        self.legacy = Some(Box::new(LegacyState::new(layout, &self.schema)));
        self
    }

    /// Legacy: decode until a fragment is ready; false at the end.
    fn legacy_advance(&mut self) -> Result<bool> {
        let Inner {
            legacy,
            src,
            schema,
            key,
            state,
            single,
            ..
        } = self;
        let Some(l) = legacy.as_deref_mut() else {
            return Ok(false);
        };
        if *state == State::Done {
            return Ok(false);
        }
        match l.advance(src, schema, key) {
            Ok(Step::Done) => {
                *state = State::Done;
                Ok(false)
            }
            Ok(Step::Ready) => {
                *state = if l.current_is_end() {
                    if *single {
                        State::Done
                    } else {
                        State::PartitionStart
                    }
                } else {
                    State::Unfiltered
                };
                Ok(true)
            }
            Err(e) => {
                // Errors before the key was read carry no partition.
                if !matches!(*state, State::Unfiltered) && !l.in_partition() {
                    *state = State::PartitionStart;
                } else {
                    *state = State::Unfiltered;
                }
                Err(e)
            }
        }
    }

    /// Legacy: position of the next fragment (decoded ahead if needed).
    fn legacy_peek(&mut self) -> Result<Option<DataPos>> {
        let Inner {
            legacy,
            src,
            schema,
            key,
            ..
        } = self;
        let Some(l) = legacy.as_deref_mut() else {
            return Ok(None);
        };
        l.peek(src, schema, key).map(|p| p.map(DataPos))
    }

    fn legacy_unsupported(&self, what: &'static str) -> Error {
        self.ctx(
            Error::new(
                ErrorKind::Unsupported(format!(
                    "{what} is not available for the pre-3.0 cell format"
                )),
                what,
            )
            .in_component(Component::Data),
        )
    }

    /// Attach file and partition context to an error.
    fn ctx(&self, e: Error) -> Error {
        let e = match self.src.path() {
            Some(p) => e.in_file(p),
            None => e,
        };
        match self.state {
            State::StaticRow | State::Unfiltered => e.in_partition(hex(&self.key)),
            _ => e,
        }
    }

    fn fail(&self, e: Error) -> Error {
        self.failed.set(true);
        self.ctx(e)
    }
}

impl RowHome for Inner<'_> {
    fn fail(&self, e: Error) -> Error {
        Inner::fail(self, e)
    }

    fn spare(&self) -> &RefCell<Spare> {
        &self.spare
    }
}

impl Inner<'_> {
    /// Run `measure` on the window, growing it while the decoder runs short
    /// and the file has more. Returns the measure's result and the number of
    /// bytes it consumed.
    fn measure_with<T>(
        &mut self,
        mut f: impl FnMut(&mut crate::cur::Cur<'_>, &DataSchema) -> Result<T>,
    ) -> Result<(T, usize)> {
        loop {
            let mut cur = self.src.cursor();
            let window = cur.remaining() as u64;
            let e = match f(&mut cur, &self.schema) {
                Ok(v) => return Ok((v, cur.pos())),
                Err(e) => e,
            };
            let (Some(need), Some(at)) = (is_short_read(&e), e.offset) else {
                return Err(e);
            };
            let want = at
                .saturating_sub(self.src.position().0)
                .saturating_add(need);
            if want <= window || want > self.src.remaining() {
                // Not a short window: corrupt, or the file really ends here.
                return Err(e);
            }
            if !self.src.fill(want)? {
                return Err(e);
            }
        }
    }

    fn record(&mut self, position: u64, stored: u64, expected: u64) {
        if !self.opts.check_prev_sizes || stored == expected {
            return;
        }
        if self.findings.len() >= self.opts.max_findings {
            self.findings_dropped += 1;
            return;
        }
        self.findings.push(Finding {
            position: DataPos(position),
            partition: DataPos(self.partition_start),
            kind: FindingKind::PrevUnfilteredSize { stored, expected },
        });
    }

    /// Measure the next fragment, load it whole (unless `skip_body`), step
    /// over it and update the state. Returns what to decode.
    fn prepare(&mut self, skip_body: bool) -> Result<Option<Plan>> {
        self.last_row = None;
        let start = self.src.position().0;
        if self.state == State::Done {
            return Ok(None);
        }
        if self.state == State::PartitionStart {
            if self.src.at_end() {
                self.state = State::Done;
                return Ok(None);
            }
            let features = self.schema.features;
            let (key_len, len) = self.measure_with(|c, _| {
                decode::partition_header(c, &features).map(|(k, _)| k.len())
            })?;
            // Keep a copy of the key for error context (buffer reused).
            self.key.clear();
            self.key
                .extend_from_slice(self.src.window().get(2..2 + key_len).unwrap_or(&[]));
            self.src.advance(len as u64)?;
            self.partition_start = start;
            self.prev_start = start;
            self.state = if self.schema.has_static_row() {
                State::StaticRow
            } else {
                State::Unfiltered
            };
            return Ok(Some(Plan::PartitionStart { len }));
        }
        if self.src.at_end() {
            return Err(self.src_err(
                ErrorKind::UnexpectedEof { need: 1, have: 0 },
                "unfiltered flags (Data.db ends inside a partition)",
            ));
        }
        let (head, _) = self.measure_with(decode::measure)?;
        let total = head.total();
        if total > self.src.remaining() {
            return Err(self.src_err(
                ErrorKind::LengthOutOfRange {
                    len: total,
                    remaining: self.src.remaining(),
                },
                "unfiltered size (extends past the end of Data.db)",
            ));
        }
        let expect_static = self.state == State::StaticRow;
        let plan = match head {
            Head::End if expect_static => {
                return Err(self.src_err(
                    ErrorKind::BadValue("partition ends before its static row".into()),
                    "static row",
                ))
            }
            Head::End => {
                self.state = if self.single {
                    State::Done
                } else {
                    State::PartitionStart
                };
                Plan::End
            }
            Head::Row {
                is_static: true,
                prev,
                ..
            } if expect_static => {
                self.record(start, prev, 0);
                self.state = State::Unfiltered;
                Plan::Static {
                    len: total as usize,
                }
            }
            Head::Row {
                is_static: true, ..
            } => {
                let msg = if self.schema.has_static_row() {
                    "static row after the first unfiltered of the partition"
                } else {
                    "static row, but the serialization header has no static columns"
                };
                return Err(self.src_err(ErrorKind::BadValue(msg.into()), "row flags"));
            }
            _ if expect_static => {
                return Err(self.src_err(
                    ErrorKind::BadValue(
                        "expected the static row (the serialization header has static columns)"
                            .into(),
                    ),
                    "row flags",
                ))
            }
            Head::Row { prev, .. } | Head::Marker { prev, .. } => {
                if self.check_next_prev {
                    self.record(start, prev, start.saturating_sub(self.prev_start));
                }
                self.check_next_prev = true;
                self.prev_start = start;
                if matches!(head, Head::Marker { .. }) {
                    Plan::Marker {
                        len: total as usize,
                    }
                } else {
                    Plan::Row {
                        len: total as usize,
                    }
                }
            }
        };
        if skip_body {
            self.src.advance(total)?;
        } else {
            if !self.src.fill(total)? {
                return Err(self.src_err(
                    ErrorKind::UnexpectedEof {
                        need: total,
                        have: self.src.window().len() as u64,
                    },
                    "unfiltered",
                ));
            }
            self.src.advance(total)?;
            if matches!(plan, Plan::Row { .. }) {
                self.last_row = Some(plan);
                self.held = None;
            }
        }
        Ok(Some(plan))
    }

    fn src_err(&self, kind: ErrorKind, what: &'static str) -> Error {
        Error::at(kind, Component::Data, self.src.position().0, what)
    }

    /// Decode the fragment `plan` describes from the bytes just stepped over.
    /// Inlined: the fragment is then built where the caller returns it, not
    /// copied out of a temporary read back before its stores have landed.
    #[inline(always)]
    fn decode(&self, plan: Plan) -> Result<Fragment<'_>> {
        let len = match plan {
            Plan::End => 1,
            Plan::PartitionStart { len }
            | Plan::Static { len }
            | Plan::Row { len }
            | Plan::Marker { len } => len,
        };
        let end = self.src.position().0;
        let position = DataPos(end - len as u64);
        let bytes = self.src.behind(len);
        let mut cur = crate::cur::Cur::new(bytes, Component::Data, position.0);
        let features = &self.schema.features;
        let f = match plan {
            Plan::PartitionStart { .. } => {
                let (key, deletion) = decode::partition_header(&mut cur, features)?;
                Fragment::PartitionStart {
                    key,
                    deletion,
                    position,
                    header_end: None,
                }
            }
            Plan::Static { .. } => Fragment::StaticRow(decode::decode_row(
                &mut cur,
                &self.schema,
                position,
                &mut self.spare.borrow_mut(),
            )?),
            Plan::Row { .. } => Fragment::Row(decode::decode_row(
                &mut cur,
                &self.schema,
                position,
                &mut self.spare.borrow_mut(),
            )?),
            Plan::Marker { .. } => Fragment::Marker(decode::decode_marker(
                &mut cur,
                &self.schema,
                position,
                &mut self.spare.borrow_mut(),
            )?),
            Plan::End => {
                cur.u8("end of partition")?;
                Fragment::PartitionEnd { position }
            }
        };
        if !cur.is_empty() {
            // Cannot happen when measure and decode agree; kept as a guard.
            return Err(cur.bad(
                "unfiltered",
                "decoded length differs from the measured length",
            ));
        }
        Ok(f)
    }

    /// [`Inner::decode`], rows left lazy. Inlined: the row is then built
    /// where it is used, not returned through memory (see `decode_row_head`).
    #[inline(always)]
    fn decode_lazy(&self, plan: Plan) -> Result<Fragment<'_, LazyRow<'_>>> {
        let len = match plan {
            Plan::Static { len } | Plan::Row { len } => len,
            other => return self.decode(other).map(Fragment::from),
        };
        let position = DataPos(self.src.position().0 - len as u64);
        let bytes = self.src.behind(len);
        let mut cur = crate::cur::Cur::new(bytes, Component::Data, position.0);
        let row = decode::decode_row_head(
            &mut cur,
            &self.schema,
            position,
            &mut self.spare.borrow_mut(),
            Some(self),
        )?;
        if !cur.is_empty() {
            // Cannot happen when measure and decode agree; kept as a guard.
            return Err(cur.bad(
                "unfiltered",
                "decoded length differs from the measured length",
            ));
        }
        Ok(if matches!(plan, Plan::Static { .. }) {
            Fragment::StaticRow(row)
        } else {
            Fragment::Row(row)
        })
    }

    fn next_or_hold(&mut self, key: &mut OwnedPrefix) -> Result<Option<Next<'_>>> {
        if self.failed.get() || self.legacy.is_some() {
            return Ok(self.next_lazy()?.map(Next::Fragment));
        }
        let plan = match self.prepare(false) {
            Ok(Some(p)) => p,
            Ok(None) => return Ok(None),
            Err(e) => return Err(self.fail(e)),
        };
        let Plan::Row { len } = plan else {
            let this = &*self;
            return match this.decode_lazy(plan) {
                Ok(f) => Ok(Some(Next::Fragment(f))),
                Err(e) => Err(this.fail(e)),
            };
        };
        // The whole head is parsed once, here, and kept: the row is built
        // again from it without parsing when it is needed.
        let position = DataPos(self.src.position().0 - len as u64);
        let mut cur = crate::cur::Cur::new(self.src.behind(len), Component::Data, position.0);
        let mut spare = self.spare.borrow_mut();
        let (marked, head) =
            match decode::decode_row_head(&mut cur, &self.schema, position, &mut spare, None) {
                Ok(mut row) => {
                    key.set(&row.clustering);
                    let marked = row.liveness.is_some() || row.deletion.is_some();
                    let head = row.head();
                    spare.keep_values(std::mem::take(&mut row.clustering.values));
                    (marked, head)
                }
                Err(e) => {
                    drop(spare);
                    return Err(self.fail(e));
                }
            };
        drop(spare);
        self.held = head;
        Ok(Some(Next::Held { marked }))
    }

    fn next_row_or(
        &mut self,
        other: impl FnOnce(Option<Fragment<'_, LazyRow<'_>>>) -> Result<()>,
    ) -> Result<Option<LazyRow<'_>>> {
        if self.failed.get() || self.legacy.is_some() {
            let f = self.next_lazy()?;
            other(f)?;
            return Ok(None);
        }
        let plan = match self.prepare(false) {
            Ok(Some(p)) => p,
            Ok(None) => {
                other(None)?;
                return Ok(None);
            }
            Err(e) => return Err(self.fail(e)),
        };
        let this = &*self;
        let Plan::Row { len } = plan else {
            let f = this.decode_lazy(plan).map_err(|e| this.fail(e))?;
            other(Some(f))?;
            return Ok(None);
        };
        // Built here, where it is returned: not moved out of a `Fragment`.
        let position = DataPos(this.src.position().0 - len as u64);
        let mut cur = crate::cur::Cur::new(this.src.behind(len), Component::Data, position.0);
        let row = decode::decode_row_head(
            &mut cur,
            &this.schema,
            position,
            &mut this.spare.borrow_mut(),
            Some(this),
        );
        match row {
            Ok(r) if cur.is_empty() => Ok(Some(r)),
            Ok(_) => Err(this.fail(cur.bad(
                "unfiltered",
                "decoded length differs from the measured length",
            ))),
            Err(e) => Err(this.fail(e)),
        }
    }

    /// The clustered row of `len` bytes just stepped over, built where it is
    /// returned (not moved out of a `Fragment`): from its kept head when there
    /// is one ([`ScanReader::keep_head`]), else parsed.
    #[inline(always)]
    fn row_behind(&self, len: usize) -> Result<LazyRow<'_>> {
        let position = DataPos(self.src.position().0 - len as u64);
        let mut cur = crate::cur::Cur::new(self.src.behind(len), Component::Data, position.0);
        let spare = &mut self.spare.borrow_mut();
        let row = match &self.held {
            Some(head) => {
                decode::row_from_head(&mut cur, &self.schema, position, spare, Some(self), head)
            }
            None => decode::decode_row_head(&mut cur, &self.schema, position, spare, Some(self)),
        };
        // Matched in place: the row is not moved through `Result` adapters.
        match row {
            Ok(r) if self.held.is_some() || cur.is_empty() => Ok(r),
            // Cannot happen when measure and decode agree; kept as a guard.
            Ok(_) => Err(self.fail(cur.bad(
                "unfiltered",
                "decoded length differs from the measured length",
            ))),
            Err(e) => Err(self.fail(e)),
        }
    }

    #[inline(always)]
    fn next_lazy(&mut self) -> Result<Option<Fragment<'_, LazyRow<'_>>>> {
        if self.failed.get() || self.legacy.is_some() {
            return Ok(self.next_fragment()?.map(Fragment::from));
        }
        let plan = match self.prepare(false) {
            Ok(Some(p)) => p,
            Ok(None) => return Ok(None),
            Err(e) => return Err(self.fail(e)),
        };
        let this = &*self;
        match this.decode_lazy(plan) {
            Ok(f) => Ok(Some(f)),
            Err(e) => Err(this.fail(e)),
        }
    }

    fn next_fragment(&mut self) -> Result<Option<Fragment<'_>>> {
        if self.failed.get() {
            return Ok(None);
        }
        if self.legacy.is_some() {
            match self.legacy_advance() {
                Ok(true) => {}
                Ok(false) => return Ok(None),
                Err(e) => return Err(self.fail(e)),
            }
            let this = &*self;
            return Ok(this.legacy.as_deref().and_then(|l| l.view(&this.schema)));
        }
        let plan = match self.prepare(false) {
            Ok(Some(p)) => p,
            Ok(None) => return Ok(None),
            Err(e) => return Err(self.fail(e)),
        };
        let this = &*self;
        match this.decode(plan) {
            Ok(f) => Ok(Some(f)),
            Err(e) => Err(this.fail(e)),
        }
    }

    fn skip_partition(&mut self) -> Result<bool> {
        if self.failed.get() {
            return Ok(false);
        }
        if self.legacy.is_some() {
            // No size fields to skip by: decode to the partition end.
            let started = self.state != State::PartitionStart;
            let mut seen_start = started;
            loop {
                match self.legacy_advance() {
                    Ok(true) => {}
                    Ok(false) => return Ok(seen_start),
                    Err(e) => return Err(self.fail(e)),
                }
                seen_start = true;
                if self.legacy.as_deref().is_some_and(|l| l.current_is_end()) {
                    return Ok(true);
                }
            }
        }
        let single = self.single;
        // Do not let the END byte finish a single-partition reader early.
        self.single = false;
        let r = self.skip_inner();
        self.single = single;
        if single && matches!(r, Ok(true)) {
            self.state = State::Done;
        }
        r.map_err(|e| self.fail(e))
    }

    fn skip_inner(&mut self) -> Result<bool> {
        if self.state == State::PartitionStart && self.prepare(true)?.is_none() {
            return Ok(false);
        }
        if self.state == State::Done {
            return Ok(false);
        }
        loop {
            match self.prepare(true)? {
                Some(Plan::End) => return Ok(true),
                Some(_) => {}
                None => return Ok(false),
            }
        }
    }

    fn seek_partition(&mut self, pos: DataPos) -> Result<()> {
        self.last_row = None;
        self.failed.set(false);
        if let Some(l) = self.legacy.as_deref_mut() {
            l.reset();
        }
        self.state = State::PartitionStart;
        self.check_next_prev = true;
        self.src.seek(pos).map_err(|e| self.fail(e))
    }

    fn seek_within(&mut self, partition: DataPos, key: &[u8], pos: DataPos) -> Result<()> {
        if self.legacy.is_some() {
            return Err(self.legacy_unsupported("seeking inside a partition"));
        }
        self.last_row = None;
        self.failed.set(false);
        self.state = State::Unfiltered;
        self.key.clear();
        self.key.extend_from_slice(key);
        self.partition_start = partition.0;
        self.prev_start = pos.0;
        self.check_next_prev = false;
        self.src.seek(pos).map_err(|e| self.fail(e))
    }
}

/// The Data.db source of `sst` and, for the pre-3.0 cell format, the
/// table layout (from the schema attached to `sst`).
fn open_source(sst: &Sstable) -> Result<(DataSource<'_>, Option<Layout>)> {
    let layout = if sst.features().legacy_cells {
        match sst.table_schema() {
            Some(s) => Some(Layout::of(s)),
            None => {
                return Err(Error::new(
                    ErrorKind::Unsupported(format!(
                        "version {} stores no schema: pass the table's CREATE TABLE with \
                         --schema FILE to decode Data.db",
                        sst.version()
                    )),
                    "table schema",
                )
                .in_component(Component::Data)
                .in_file(&sst.path(Component::Data)))
            }
        }
    } else {
        None
    };
    Ok((DataSource::open(sst)?, layout))
}

fn make_inner<'s>(
    src: DataSource<'s>,
    layout: Option<Layout>,
    header: &SerializationHeader,
    features: Features,
    opts: ReaderOptions,
) -> Inner<'s> {
    let inner = Inner::new(src, header, features, opts);
    match layout {
        Some(l) => inner.with_legacy(l),
        None => inner,
    }
}
