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
use std::path::Path;

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
    /// `ka`/`la`: the cell-based decoder (see [`super::legacy`]); the
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
        let header = super::legacy::legacy_header(schema);
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
    /// cells as they are decoded ([`Row::visit`](super::Row::visit)) skips
    /// building a decoded [`Row`](super::Row). Rows of legacy (pre-3.0)
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
