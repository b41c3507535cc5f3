//! Byte-level decoders of the row format, each over a [`Cur`] that holds
//! exactly the bytes it may read (`shared/docs/sstable-format.md` §3).
//!
//! Every unfiltered is decoded in two steps, so that the window of the
//! streaming source never has to hold more than the unfiltered being read:
//!
//! 1. [`measure`] reads only the head — flags, extended flags, clustering or
//!    bound, and the `row_size` / `marker_size` vint plus the
//!    `prev_unfiltered_size` vint behind it — and returns the unfiltered's
//!    total length. Running out of bytes here means "the window is too
//!    short", never corruption, as long as the file has more data.
//! 2. [`decode_row`] / [`decode_marker`] decode the whole unfiltered from a
//!    cursor of exactly that length. The body is a sub-cursor of exactly
//!    `row_size` bytes, so a body that overruns its size fails at the first
//!    byte past it, and a body that ends early is reported as a size
//!    mismatch.
//!
//! ```text
//! row     := flags:u8 [ext:u8] [clustering] row_size:uvint
//!            body(row_size) = prev_size:uvint [liveness] [deletion] [scylla_shadowable]
//!                             [missing_columns] column_data*
//! marker  := flags:u8(0x02) kind:u8 size:u16 values marker_size:uvint
//!            body(marker_size) = prev_size:uvint deletion [start_deletion if boundary]
//! cell    := flags:u8 [ts] [ldt] [ttl] [path:vint-bytes] [value]
//! complex := [complex_deletion] count:uvint cell*
//! ```
//!
//! Upstream: C\* `o.a.c/db/rows/UnfilteredSerializer.java` (`deserializeRowBody`,
//! `deserializeMarkerBody`), `o.a.c/db/rows/Cell.java` (`Cell.Serializer`),
//! `o.a.c/db/Columns.java` (`Serializer.deserializeSubset`,
//! `deserializeLargeSubset`), `o.a.c/db/SerializationHeader.java`
//! (`readTimestamp`, `readTTL`, `readLocalDeletionTime`, `readDeletionTime`);
//! Scylla `sstables/mx/reader.cc` (`data_consume_rows_context_m`).

use crate::clustering::{self, BoundKind, ClusteringPrefix};
use crate::cur::Cur;
use crate::deletion::DeletionTime;
use crate::error::Result;
use crate::version::Features;

use super::model::{
    cell_flags as cf, flags as rf, Cell, ColumnData, Fragment, LazyRow, LivenessInfo,
    MarkerDeletion, RangeTombstoneMarker, Row, RowDeletion, RowFlags, EXPIRED_LIVENESS_TTL,
};
use super::schema::{Column, ColumnSet, DataSchema, DeltaBase};
use super::DataPos;

/// Allocations of decoded rows and markers, emptied and handed back by the
/// caller ([`crate::data::ScanReader::recycle`]) so the next ones reuse
/// them instead of allocating: the row's column list, the element lists of
/// complex columns and the clustering values. A reader that is never given
/// any allocates as usual.
///
/// The vectors are stored empty with a `'static` lifetime parameter; `reuse`
/// moves an allocation between lifetimes without `unsafe` (an empty vector
/// has no element to outlive anything).
#[derive(Debug, Default)]
pub struct Spare {
    cells: Vec<ColumnData<'static>>,
    complex: Vec<Vec<Cell<'static>>>,
    values: Vec<Option<&'static [u8]>>,
}

/// At most this many complex-column lists are kept (a row uses one per
/// complex column it has).
const MAX_SPARE_COMPLEX: usize = 64;

/// An empty `Vec<U>` in the allocation of `v` (cleared), for element types
/// that differ only in lifetimes. `collect` reuses the source allocation
/// when the layouts match (std's in-place iteration; on a std without it
/// this merely allocates).
pub(crate) fn reuse<T, U>(mut v: Vec<T>) -> Vec<U> {
    v.clear();
    v.into_iter().filter_map(|_| None).collect()
}

impl Spare {
    /// Keep the allocations of a fragment the caller is done with.
    pub(crate) fn keep(&mut self, f: Fragment<'_>) {
        match f {
            Fragment::Row(r) | Fragment::StaticRow(r) => {
                let Row {
                    mut cells,
                    clustering,
                    ..
                } = r;
                // Take the element lists in place (no moves of the others).
                for cd in cells.iter_mut() {
                    if let ColumnData::Complex { cells, .. } = cd {
                        if self.complex.len() < MAX_SPARE_COMPLEX {
                            self.complex.push(reuse(std::mem::take(cells)));
                        }
                    }
                }
                self.keep_cells(cells);
                self.keep_values(clustering.values);
            }
            Fragment::Marker(m) => self.keep_values(m.bound.values),
            Fragment::PartitionStart { .. } | Fragment::PartitionEnd { .. } => {}
        }
    }

    /// The kept cell list (empty), for a row built by hand.
    pub(crate) fn take_cells<'a>(&mut self) -> Vec<ColumnData<'a>> {
        reuse(std::mem::take(&mut self.cells))
    }

    /// Keep a cell list, e.g. one from [`Spare::take_cells`].
    pub(crate) fn keep_cells(&mut self, v: Vec<ColumnData<'_>>) {
        if v.capacity() > self.cells.capacity() {
            self.cells = reuse(v);
        }
    }

    pub(crate) fn keep_values(&mut self, v: Vec<Option<&[u8]>>) {
        if v.capacity() > self.values.capacity() {
            self.values = reuse(v);
        }
    }

    /// Merge another spare into this one.
    pub(crate) fn merge(&mut self, other: Spare) {
        if other.cells.capacity() > self.cells.capacity() {
            self.cells = other.cells;
        }
        if other.values.capacity() > self.values.capacity() {
            self.values = other.values;
        }
        for c in other.complex {
            if self.complex.len() >= MAX_SPARE_COMPLEX {
                break;
            }
            self.complex.push(c);
        }
    }
}

/// What the next unfiltered is, from its head only (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Head {
    /// The END_OF_PARTITION byte (1 byte).
    End,
    /// A row.
    Row {
        /// Static row (extended flag IS_STATIC).
        is_static: bool,
        /// Total bytes, flags to the end of the body.
        total: u64,
        /// `prev_unfiltered_size` as stored.
        prev: u64,
    },
    /// A range tombstone marker.
    Marker {
        /// Total bytes, flags to the end of the body.
        total: u64,
        /// `prev_unfiltered_size` as stored.
        prev: u64,
    },
}

impl Head {
    /// Total bytes of the unfiltered.
    pub(crate) fn total(&self) -> u64 {
        match *self {
            Head::End => 1,
            Head::Row { total, .. } | Head::Marker { total, .. } => total,
        }
    }
}

/// Skip `count` clustering values (the blocks-of-32 encoding, §3.5) without
/// collecting them.
fn skip_clustering_values(cur: &mut Cur<'_>, fixed: &[Option<usize>], count: usize) -> Result<()> {
    if count > fixed.len() {
        return Err(cur.bad(
            "bound size",
            format!(
                "{count} clustering values but the header has {} clustering columns",
                fixed.len()
            ),
        ));
    }
    let mut header = 0u64;
    for (i, fixed_len) in fixed.iter().take(count).enumerate() {
        if i % 32 == 0 {
            header = cur.uvint("clustering block header")?;
        }
        let shift = (i % 32) * 2;
        if header & (0b11 << shift) != 0 {
            continue; // null or empty: no bytes
        }
        match fixed_len {
            Some(n) => cur.skip(*n as u64, "clustering value")?,
            None => {
                let n = cur.uvint("clustering value length")?;
                cur.skip(n, "clustering value")?;
            }
        }
    }
    Ok(())
}

/// Read the `size` vint and the `prev_unfiltered_size` vint that starts the
/// body; returns `(total, prev)` where total counts from `start` (the
/// unfiltered's first byte, relative to `cur`) to the end of the body.
fn size_and_prev(cur: &mut Cur<'_>, start: usize, what: &'static str) -> Result<(u64, u64)> {
    let size = cur.uvint(what)?;
    let body_start = cur.pos();
    let prev = cur.uvint("previous unfiltered size")?;
    if (cur.pos() - body_start) as u64 > size {
        return Err(cur.bad(
            what,
            format!("{what} {size} is smaller than its previous-unfiltered-size field"),
        ));
    }
    let total = ((body_start - start) as u64)
        .checked_add(size)
        .ok_or_else(|| cur.bad(what, format!("{what} {size} overflows")))?;
    Ok((total, prev))
}

/// Read the head of the unfiltered at the cursor (which may extend past it):
/// its kind and total length. Consumes the head bytes.
pub(crate) fn measure(cur: &mut Cur<'_>, schema: &DataSchema) -> Result<Head> {
    let start = cur.pos();
    let flags = cur.u8("unfiltered flags")?;
    if flags & rf::END_OF_PARTITION != 0 {
        return Ok(Head::End);
    }
    if flags & rf::IS_MARKER != 0 {
        let at = cur.clone();
        let kind = cur.u8("bound kind")?;
        match BoundKind::from_ordinal(kind) {
            Some(BoundKind::Clustering | BoundKind::StaticClustering) | None => {
                return Err(at.bad(
                    "bound kind",
                    format!("invalid range tombstone bound kind {kind}"),
                ));
            }
            Some(_) => {}
        }
        let size = cur.u16("bound size")? as usize;
        skip_clustering_values(cur, &schema.clustering_fixed_lens, size)?;
        let (total, prev) = size_and_prev(cur, start, "marker size")?;
        return Ok(Head::Marker { total, prev });
    }
    let ext = if flags & rf::EXTENSION_FLAG != 0 {
        cur.u8("extended row flags")?
    } else {
        0
    };
    let is_static = ext & rf::EXT_IS_STATIC != 0;
    if !is_static {
        let n = schema.clustering_len();
        skip_clustering_values(cur, &schema.clustering_fixed_lens, n)?;
    }
    let (total, prev) = size_and_prev(cur, start, "row size")?;
    Ok(Head::Row {
        is_static,
        total,
        prev,
    })
}

/// Decode a partition header: `key_len:u16 key deletion` (§3.1, §3.2).
pub(crate) fn partition_header<'a>(
    cur: &mut Cur<'a>,
    features: &Features,
) -> Result<(&'a [u8], DeletionTime)> {
    let key = cur.short_bytes("partition key")?;
    let deletion = DeletionTime::decode(cur, features)?;
    Ok((key, deletion))
}

/// A delta-encoded DeletionTime: mfda delta, then ldt delta (§3.8).
#[inline]
fn delta_deletion(cur: &mut Cur<'_>, d: &DeltaBase, what: &'static str) -> Result<DeletionTime> {
    let mfda = d.timestamp(cur.uvint(what)?);
    let ldt = d.local_deletion_time(cur.uvint(what)?);
    Ok(DeletionTime {
        marked_for_delete_at: mfda,
        local_deletion_time: ldt,
    })
}

/// The present columns of a row, in ascending data order (§3.6): decoded
/// lazily so that no per-row index list is allocated.
enum Present<'a> {
    /// Every column (HAS_ALL_COLUMNS or a zero bitmap).
    All { next: usize, n: usize },
    /// Superset < 64: bit i set = column i present.
    Bits(u64),
    /// Superset >= 64, listed present indexes (already validated).
    Listed { list: Cur<'a>, left: usize },
    /// Superset >= 64, listed missing indexes (already validated).
    Missing {
        list: Cur<'a>,
        left: usize,
        next_missing: Option<usize>,
        next: usize,
        n: usize,
    },
}

impl Present<'_> {
    /// Upper bound of the number of present columns (for `Vec` capacity).
    fn count_hint(&self) -> usize {
        match self {
            Present::All { n, .. } => *n,
            Present::Bits(b) => b.count_ones() as usize,
            Present::Listed { left, .. } => *left,
            Present::Missing { n, .. } => *n,
        }
    }

    /// The next present column. The common encodings (all columns, a
    /// bitmap) are inlined into the row loop; the listed ones are not.
    #[inline(always)]
    fn next(&mut self) -> Result<Option<usize>> {
        match self {
            Present::All { next, n } => Ok(if *next < *n {
                *next += 1;
                Some(*next - 1)
            } else {
                None
            }),
            Present::Bits(bits) => Ok(if *bits == 0 {
                None
            } else {
                let i = bits.trailing_zeros() as usize;
                *bits &= *bits - 1;
                Some(i)
            }),
            _ => self.next_listed(),
        }
    }

    #[inline(never)]
    fn next_listed(&mut self) -> Result<Option<usize>> {
        Ok(match self {
            Present::All { .. } | Present::Bits(_) => None,
            Present::Listed { list, left } => {
                if *left == 0 {
                    None
                } else {
                    *left -= 1;
                    Some(list.uvint("present column index")? as usize)
                }
            }
            Present::Missing {
                list,
                left,
                next_missing,
                next,
                n,
            } => loop {
                if *next >= *n {
                    break None;
                }
                let i = *next;
                *next += 1;
                if *next_missing == Some(i) {
                    *next_missing = if *left > 0 {
                        *left -= 1;
                        Some(list.uvint("missing column index")? as usize)
                    } else {
                        None
                    };
                    continue;
                }
                break Some(i);
            },
        })
    }
}

/// Read the missing-columns encoding (`Columns.Serializer.deserializeSubset`).
fn missing_columns<'a>(cur: &mut Cur<'a>, n: usize) -> Result<Present<'a>> {
    let at = cur.clone();
    let encoded = cur.uvint("missing columns")?;
    if encoded == 0 {
        // NOTE: 0 means "all present" even without HAS_ALL_COLUMNS (C* returns
        // the superset); writers use the flag instead, but the bitmap is legal.
        return Ok(Present::All { next: 0, n });
    }
    if n < 64 {
        let mask = if n == 0 { 0 } else { u64::MAX >> (64 - n) };
        if encoded & !mask != 0 {
            return Err(at.bad(
                "missing columns",
                format!("missing-columns bitmap {encoded:#x} has bits beyond the {n} columns"),
            ));
        }
        return Ok(Present::Bits(!encoded & mask));
    }
    // Large superset: `delta` = superset - present, then the shorter list.
    let delta = encoded;
    if delta > n as u64 {
        return Err(at.bad(
            "missing columns",
            format!("{delta} missing columns but the superset has {n}"),
        ));
    }
    let present = n - delta as usize;
    let (listed, listing_present) = if present < n / 2 {
        (present, true)
    } else {
        (delta as usize, false)
    };
    // Validate the list once (ascending, in range) and remember its bytes.
    let list_start = cur.clone();
    let count = cur.count(listed as u64, 1, "column index list")?;
    let mut prev: Option<u64> = None;
    for _ in 0..count {
        let here = cur.clone();
        let i = cur.uvint("column index")?;
        if i >= n as u64 || prev.is_some_and(|p| i <= p) {
            return Err(here.bad(
                "column index",
                format!("column index {i} out of order or beyond the {n} columns"),
            ));
        }
        prev = Some(i);
    }
    let mut list = list_start;
    let list_len = (list.remaining() - cur.remaining()) as u64;
    let list = list.split(list_len, "column index list")?;
    if listing_present {
        Ok(Present::Listed { list, left: count })
    } else {
        let mut list = list;
        let mut left = count;
        let next_missing = if left > 0 {
            left -= 1;
            Some(list.uvint("missing column index")? as usize)
        } else {
            None
        };
        Ok(Present::Missing {
            list,
            left,
            next_missing,
            next: 0,
            n,
        })
    }
}

/// Decode one cell of `column` (§3.10). Inlined into the row loop: the
/// cell is then built in place instead of being copied out of a `Result`.
#[inline(always)]
fn cell<'a>(
    cur: &mut Cur<'a>,
    column: &Column,
    d: &DeltaBase,
    row: Option<&LivenessInfo>,
) -> Result<Cell<'a>> {
    let flags = cur.u8("cell flags")?;
    let timestamp = if flags & cf::USE_ROW_TIMESTAMP != 0 {
        // NOTE: without row liveness C* uses LivenessInfo.EMPTY's timestamp
        // (NO_TIMESTAMP = i64::MIN); writers never produce that.
        row.map_or(i64::MIN, |l| l.timestamp)
    } else {
        d.timestamp(cur.uvint("cell timestamp")?)
    };
    let deleted_or_expiring = flags & (cf::IS_DELETED | cf::IS_EXPIRING) != 0;
    // NOTE: LDT before TTL here; the row liveness has TTL first (§15.5).
    let (local_deletion_time, ttl) = if flags & cf::USE_ROW_TTL != 0 {
        (
            row.and_then(|l| l.local_expiration_time),
            row.and_then(|l| l.ttl),
        )
    } else {
        let ldt = if deleted_or_expiring {
            Some(d.local_deletion_time(cur.uvint("cell local deletion time")?))
        } else {
            None
        };
        let ttl = if flags & cf::IS_EXPIRING != 0 {
            Some(d.ttl(cur.uvint("cell ttl")?))
        } else {
            None
        };
        (ldt, ttl)
    };
    let path = if column.complex {
        Some(cur.vint_bytes("cell path")?)
    } else {
        None
    };
    let value: &'a [u8] = if flags & cf::HAS_EMPTY_VALUE != 0 {
        &[]
    } else {
        match column.fixed_len {
            Some(n) => cur.bytes(n, "cell value")?,
            None => cur.vint_bytes("cell value")?,
        }
    };
    Ok(Cell {
        flags,
        timestamp,
        local_deletion_time,
        ttl,
        path,
        value,
        counter_column: column.counter,
    })
}

/// `v.push(x)`, inlined. `Vec::push` of these large elements is an
/// out-of-line call (LLVM does not inline it into `decode_row`) that copies
/// the element from the stack, where it was just written piecewise (a
/// store-forwarding stall per cell); inlined, the element is written
/// straight into the vector.
#[inline(always)]
fn push<T>(v: &mut Vec<T>, x: T) {
    if v.len() == v.capacity() {
        v.reserve(1);
    }
    let len = v.len();
    // SAFETY: `reserve` made room for one more element, so slot `len` is
    // allocated and unused; it is initialized before the length covers it.
    unsafe {
        v.as_mut_ptr().add(len).write(x);
        v.set_len(len + 1);
    }
}

/// A receiver of a row's column data, called in data order as
/// [`LazyRow`]'s [`Row::visit`] decodes it: no `Vec` of cells is built in between.
///
/// A complex column is `complex_start`, one `element` per cell (in path
/// order), then `complex_end`. The cells borrow the reader's window, like
/// the fields of a [`Row`].
pub trait ColumnVisitor<'a> {
    /// A simple column's cell.
    fn simple(&mut self, column: &'a Column, cell: &Cell<'a>);
    /// A complex column starts: its collection-level deletion (as in
    /// [`ColumnData::Complex`]) and how many cells follow.
    fn complex_start(
        &mut self,
        column: &'a Column,
        complex_deletion: Option<DeletionTime>,
        count: usize,
    );
    /// One cell of the complex column being visited.
    fn element(&mut self, column: &'a Column, cell: &Cell<'a>);
    /// The complex column ends.
    fn complex_end(&mut self, column: &'a Column);
}

/// What a [`LazyRow`] reports to the reader it came from: errors (which
/// fuse the reader and get its file / partition context) and the clustering
/// values' allocation, for the next rows to reuse.
pub(crate) trait RowHome {
    /// The error with the reader's context; the reader is fused.
    fn fail(&self, e: crate::error::Error) -> crate::error::Error;
    /// The reader's spare allocations.
    fn spare(&self) -> &std::cell::RefCell<Spare>;
}

/// The column data of a [`LazyRow`]: still encoded (decoded when the row is
/// consumed, errors reported to the reader it came from), or already
/// decoded (rows of pre-3.0 files, which are converted whole).
pub struct Pending<'a>(PendingInner<'a>);

enum PendingInner<'a> {
    Encoded {
        columns: Columns<'a>,
        home: Option<&'a dyn RowHome>,
    },
    Decoded(Vec<ColumnData<'a>>),
}

impl std::fmt::Debug for Pending<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.0 {
            PendingInner::Encoded { .. } => f.debug_struct("Pending").finish_non_exhaustive(),
            PendingInner::Decoded(cells) => f.debug_tuple("Decoded").field(cells).finish(),
        }
    }
}

impl<'a> From<Row<'a>> for LazyRow<'a> {
    /// A decoded row in the lazy form.
    fn from(r: Row<'a>) -> Self {
        r.map_cells(|cells| Pending(PendingInner::Decoded(cells)))
    }
}

/// The undecoded column data of a row and what decoding it needs.
struct Columns<'a> {
    /// The row body from the first column on.
    body: Cur<'a>,
    present: Present<'a>,
    set: &'a [Column],
    deltas: &'a DeltaBase,
    liveness: Option<LivenessInfo>,
    has_complex_deletion: bool,
    row_size: u64,
}

impl<'a> Columns<'a> {
    /// Decode every column into `v`, then check that the body is used up.
    #[inline(always)]
    fn visit<V: ColumnVisitor<'a>>(self, v: &mut V) -> Result<()> {
        let Columns {
            mut body,
            mut present,
            set,
            deltas: d,
            liveness,
            has_complex_deletion,
            row_size,
        } = self;
        while let Some(i) = present.next()? {
            let Some(column) = set.get(i) else {
                return Err(body.bad(
                    "column index",
                    format!("column index {i} beyond the superset"),
                ));
            };
            if column.complex {
                let complex_deletion = if has_complex_deletion {
                    let dt = delta_deletion(&mut body, d, "complex deletion")?;
                    // NOTE: HAS_COMPLEX_DELETION forces a deletion on every complex
                    // column; LIVE shows up as mfda == i64::MIN (§3.8, §15.10).
                    (dt.marked_for_delete_at != i64::MIN).then_some(dt)
                } else {
                    None
                };
                let n = body.uvint("complex cell count")?;
                // A cell is at least a flags byte and a path length.
                let n = body.count(n, 2, "complex cell count")?;
                v.complex_start(column, complex_deletion, n);
                for _ in 0..n {
                    let c = cell(&mut body, column, d, liveness.as_ref())?;
                    v.element(column, &c);
                }
                v.complex_end(column);
            } else {
                let c = cell(&mut body, column, d, liveness.as_ref())?;
                v.simple(column, &c);
            }
        }
        if !body.is_empty() {
            return Err(body.bad(
                "row body",
                format!(
                    "row_size {row_size} does not match the row body: {} bytes left after the last column",
                    body.remaining()
                ),
            ));
        }
        Ok(())
    }
}

/// [`ColumnVisitor`] that collects the column data of a [`Row`], in
/// allocations taken from a [`Spare`].
struct Collect<'a, 's> {
    cells: Vec<ColumnData<'a>>,
    /// The complex column being collected: its deletion and cells.
    complex: (Option<DeletionTime>, Vec<Cell<'a>>),
    spare: &'s mut Spare,
}

impl<'a> ColumnVisitor<'a> for Collect<'a, '_> {
    #[inline(always)]
    fn simple(&mut self, column: &'a Column, cell: &Cell<'a>) {
        push(
            &mut self.cells,
            ColumnData::Simple {
                column,
                cell: *cell,
            },
        );
    }

    #[inline(always)]
    fn complex_start(&mut self, _: &'a Column, deletion: Option<DeletionTime>, count: usize) {
        let mut cs: Vec<Cell<'a>> = reuse(self.spare.complex.pop().unwrap_or_default());
        cs.reserve(count);
        self.complex = (deletion, cs);
    }

    #[inline(always)]
    fn element(&mut self, _: &'a Column, cell: &Cell<'a>) {
        push(&mut self.complex.1, *cell);
    }

    #[inline(always)]
    fn complex_end(&mut self, column: &'a Column) {
        let (complex_deletion, cells) = std::mem::take(&mut self.complex);
        push(
            &mut self.cells,
            ColumnData::Complex {
                column,
                complex_deletion,
                cells,
            },
        );
    }
}

impl<'a> Columns<'a> {
    /// Decode every column into a vector, in allocations taken from `spare`.
    #[inline(always)]
    fn collect(self, spare: &mut Spare) -> Result<Vec<ColumnData<'a>>> {
        // Each present column takes at least one byte, which bounds the capacity.
        let cap = self.present.count_hint().min(self.body.remaining());
        let mut cells: Vec<ColumnData<'a>> = reuse(std::mem::take(&mut spare.cells));
        cells.reserve(cap);
        let mut c = Collect {
            cells,
            complex: (None, Vec::new()),
            spare,
        };
        self.visit(&mut c)?;
        Ok(c.cells)
    }
}

impl<'a> LazyRow<'a> {
    /// Decode the column data into `v`. An error here (corrupt column data)
    /// fuses the reader the row came from, as `next_fragment` would have.
    pub fn visit<V: ColumnVisitor<'a>>(self, v: &mut V) -> Result<()> {
        let Row {
            mut clustering,
            cells: Pending(pending),
            ..
        } = self;
        match pending {
            PendingInner::Encoded { columns, home } => {
                let r = columns.visit(v);
                match home {
                    Some(h) => {
                        let values = std::mem::take(&mut clustering.values);
                        h.spare().borrow_mut().keep_values(values);
                        r.map_err(|e| h.fail(e))
                    }
                    None => r,
                }
            }
            PendingInner::Decoded(cells) => {
                super::model::visit_decoded(&cells, v);
                Ok(())
            }
        }
    }

    /// Decode the column data into a [`Row`] (the allocations come from the
    /// reader's spares).
    pub fn into_decoded(self) -> Result<Row<'a>> {
        self.try_map_cells(|Pending(pending)| match pending {
            PendingInner::Encoded {
                columns,
                home: Some(h),
            } => columns
                .collect(&mut h.spare().borrow_mut())
                .map_err(|e| h.fail(e)),
            PendingInner::Encoded {
                columns,
                home: None,
            } => columns.collect(&mut Spare::default()),
            PendingInner::Decoded(cells) => Ok(cells),
        })
    }
}

/// Decode a whole row from a cursor holding exactly its bytes (as measured),
/// in allocations taken from `spare`.
pub(crate) fn decode_row<'a>(
    cur: &mut Cur<'a>,
    schema: &'a DataSchema,
    position: DataPos,
    spare: &mut Spare,
) -> Result<Row<'a>> {
    let row = decode_row_head(cur, schema, position, spare, None)?;
    row.try_map_cells(|Pending(pending)| match pending {
        PendingInner::Encoded { columns, .. } => columns.collect(spare),
        PendingInner::Decoded(cells) => Ok(cells),
    })
}

/// Decode a row's head from a cursor holding exactly its bytes (as
/// measured); the cursor is left empty, the column data in the [`LazyRow`].
/// Inlined: the row is then built where it is used, not returned through
/// memory (which stalls on store forwarding).
#[inline(always)]
pub(crate) fn decode_row_head<'a>(
    cur: &mut Cur<'a>,
    schema: &'a DataSchema,
    position: DataPos,
    spare: &mut Spare,
    home: Option<&'a dyn RowHome>,
) -> Result<LazyRow<'a>> {
    let start = cur.pos();
    let flags = cur.u8("row flags")?;
    let ext = if flags & rf::EXTENSION_FLAG != 0 {
        cur.u8("extended row flags")?
    } else {
        0
    };
    let row_flags = RowFlags { flags, ext };
    let is_static = row_flags.is_static();
    let clustering = if is_static {
        ClusteringPrefix {
            kind: BoundKind::StaticClustering,
            values: Vec::new(),
        }
    } else {
        let values = reuse(std::mem::take(&mut spare.values));
        clustering::decode_clustering_in(cur, &schema.clustering_fixed_lens, values)?
    };
    let row_size = cur.uvint("row size")?;
    let mut body = cur.split(row_size, "row body")?;
    let prev_unfiltered_size = body.uvint("previous unfiltered size")?;
    let d = &schema.deltas;

    // Liveness: timestamp, then TTL, then expiration (§3.7). C* reads the TTL
    // only inside HAS_TIMESTAMP.
    let liveness = if flags & rf::HAS_TIMESTAMP != 0 {
        let timestamp = d.timestamp(body.uvint("row timestamp")?);
        let (ttl, expiration) = if flags & rf::HAS_TTL != 0 {
            let ttl = d.ttl(body.uvint("row ttl")?);
            let ldt = d.local_deletion_time(body.uvint("row local expiration time")?);
            (Some(ttl), Some(ldt))
        } else {
            (None, None)
        };
        Some(LivenessInfo {
            timestamp,
            ttl,
            local_expiration_time: expiration,
            expired: ttl == Some(EXPIRED_LIVENESS_TTL),
        })
    } else {
        None
    };
    let deletion = if flags & rf::HAS_DELETION != 0 {
        Some(RowDeletion {
            time: delta_deletion(&mut body, d, "row deletion")?,
            shadowable: ext & rf::EXT_HAS_SHADOWABLE_DELETION != 0,
        })
    } else {
        None
    };
    let scylla_shadowable_deletion = if ext & rf::EXT_HAS_SCYLLA_SHADOWABLE_DELETION != 0 {
        Some(delta_deletion(
            &mut body,
            d,
            "scylla shadowable row deletion",
        )?)
    } else {
        None
    };

    let set: &'a ColumnSet = if is_static {
        &schema.static_columns
    } else {
        &schema.regular_columns
    };
    let columns = set.columns();
    let present = if flags & rf::HAS_ALL_COLUMNS != 0 {
        Present::All {
            next: 0,
            n: columns.len(),
        }
    } else {
        missing_columns(&mut body, columns.len())?
    };
    Ok(LazyRow {
        position,
        size: (cur.pos() - start) as u64,
        clustering,
        flags: row_flags,
        row_size,
        prev_unfiltered_size,
        liveness,
        deletion,
        scylla_shadowable_deletion,
        cells: Pending(PendingInner::Encoded {
            columns: Columns {
                body,
                present,
                set: columns,
                deltas: d,
                liveness,
                has_complex_deletion: flags & rf::HAS_COMPLEX_DELETION != 0,
                row_size,
            },
            home,
        }),
    })
}

/// Decode a range tombstone marker from a cursor holding exactly its bytes.
pub(crate) fn decode_marker<'a>(
    cur: &mut Cur<'a>,
    schema: &DataSchema,
    position: DataPos,
    spare: &mut Spare,
) -> Result<RangeTombstoneMarker<'a>> {
    let start = cur.pos();
    let flags = cur.u8("marker flags")?;
    let values = reuse(std::mem::take(&mut spare.values));
    let bound = clustering::decode_bound_in(cur, &schema.clustering_fixed_lens, values)?;
    let marker_size = cur.uvint("marker size")?;
    let mut body = cur.split(marker_size, "marker body")?;
    let prev_unfiltered_size = body.uvint("previous unfiltered size")?;
    let d = &schema.deltas;
    let deletion = if bound.kind.is_boundary() {
        // NOTE: a boundary stores the deletion it closes first (§3.9).
        let end = delta_deletion(&mut body, d, "boundary end deletion")?;
        let start = delta_deletion(&mut body, d, "boundary start deletion")?;
        MarkerDeletion::Boundary { end, start }
    } else {
        MarkerDeletion::Bound(delta_deletion(&mut body, d, "marker deletion")?)
    };
    if !body.is_empty() {
        return Err(body.bad(
            "marker body",
            format!(
                "marker_size {marker_size} does not match the marker body: {} bytes left",
                body.remaining()
            ),
        ));
    }
    Ok(RangeTombstoneMarker {
        position,
        size: (cur.pos() - start) as u64,
        flags,
        bound,
        marker_size,
        prev_unfiltered_size,
        deletion,
    })
}

/// The head of a clustered row as the reader parsed it, copied out
/// without borrows, so that the row can be built again from its bytes
/// without parsing them twice (a merge holds rows in their readers).
/// Rows whose present columns are listed (64 columns or more) have none.
#[derive(Debug, Clone, Copy)]
pub struct RowHead {
    size: u64,
    flags: RowFlags,
    row_size: u64,
    prev_unfiltered_size: u64,
    liveness: Option<LivenessInfo>,
    deletion: Option<RowDeletion>,
    scylla_shadowable_deletion: Option<DeletionTime>,
    /// The column data: its cursor's slice (from the row's first byte) and
    /// where the cursor is in it.
    body_start: u32,
    body_len: u32,
    body_pos: u32,
    /// `Present::All { next: 0, n }` when `None`, else `Present::Bits`.
    bits: Option<u64>,
    has_complex_deletion: bool,
}

impl LazyRow<'_> {
    /// The head of this clustered row, undecoded columns included, as a
    /// plain copy, from which the reader builds the row again
    /// ([`ScanReader::keep_head`](super::ScanReader::keep_head)).
    pub fn head(&self) -> Option<RowHead> {
        let PendingInner::Encoded { columns, .. } = &self.cells.0 else {
            return None;
        };
        if self.is_static() {
            return None;
        }
        let bits = match columns.present {
            Present::All { next: 0, .. } => None,
            Present::Bits(b) => Some(b),
            _ => return None,
        };
        let body = &columns.body;
        let body_abs = body.abs_offset() - body.pos() as u64;
        Some(RowHead {
            size: self.size,
            flags: self.flags,
            row_size: self.row_size,
            prev_unfiltered_size: self.prev_unfiltered_size,
            liveness: self.liveness,
            deletion: self.deletion,
            scylla_shadowable_deletion: self.scylla_shadowable_deletion,
            body_start: u32::try_from(body_abs.checked_sub(self.position.0)?).ok()?,
            body_len: u32::try_from(body.pos() + body.remaining()).ok()?,
            body_pos: u32::try_from(body.pos()).ok()?,
            bits,
            has_complex_deletion: columns.has_complex_deletion,
        })
    }
}

/// The clustered row `head` describes, from a cursor holding exactly the
/// bytes it was parsed from: only the clustering is decoded again.
#[inline(always)]
pub(crate) fn row_from_head<'a>(
    cur: &mut Cur<'a>,
    schema: &'a DataSchema,
    position: DataPos,
    spare: &mut Spare,
    home: Option<&'a dyn RowHome>,
    head: &RowHead,
) -> Result<LazyRow<'a>> {
    let bytes = cur.rest();
    let flags = cur.u8("row flags")?;
    if flags & rf::EXTENSION_FLAG != 0 {
        cur.u8("extended row flags")?;
    }
    let values = reuse(std::mem::take(&mut spare.values));
    let clustering = clustering::decode_clustering_in(cur, &schema.clustering_fixed_lens, values)?;
    let start = head.body_start as usize;
    let body_bytes = bytes
        .get(start..start + head.body_len as usize)
        .ok_or_else(|| cur.bad("row body", "the held row's bytes changed"))?;
    let mut body = Cur::new(body_bytes, cur.component(), position.0 + start as u64);
    body.seek(head.body_pos as usize, "row body")?;
    let columns = schema.regular_columns.columns();
    let present = match head.bits {
        None => Present::All {
            next: 0,
            n: columns.len(),
        },
        Some(b) => Present::Bits(b),
    };
    Ok(LazyRow {
        position,
        size: head.size,
        clustering,
        flags: head.flags,
        row_size: head.row_size,
        prev_unfiltered_size: head.prev_unfiltered_size,
        liveness: head.liveness,
        deletion: head.deletion,
        scylla_shadowable_deletion: head.scylla_shadowable_deletion,
        cells: Pending(PendingInner::Encoded {
            columns: Columns {
                body,
                present,
                set: columns,
                deltas: &schema.deltas,
                liveness: head.liveness,
                has_complex_deletion: head.has_complex_deletion,
                row_size: head.row_size,
            },
            home,
        }),
    })
}
