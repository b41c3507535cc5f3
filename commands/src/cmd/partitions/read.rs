//! Reading an sstable's partitions for `partitions`: Data.db decoded
//! (on several threads when it can be cut into units), or the index alone
//! (`--partitions-only`), each partition's stats handed on in Data.db order
//! and counted in the sstable's summary.

use sstkit_format::analytics::{PartitionStats, Summary};
use sstkit_format::bti::partitions::{for_each_entry as for_each_trie_entry, PartitionPosition};
use sstkit_format::bti::{read_footer, IoSource, RowsEntry};
use sstkit_format::compression::CompressionInfo;
use sstkit_format::cur::Cur;
use sstkit_format::data::{DataPos, DataSource, Fragment, ScanReader};
use sstkit_format::deletion::DeletionTime;
use sstkit_format::engine::{self, Table};
use sstkit_format::io::ReadKind;
use sstkit_format::statistics::SerializationHeader;
use sstkit_format::{Component, Error, ErrorKind, Sstable};

use crate::cli::PartitionsArgs;
use crate::output::hex;
use crate::progress::Progress;
use crate::render::KeyCtx;
use crate::sink::pieces::Buffers;
use crate::{CmdError, CmdResult};

/// `--key` / `--exclude-key`, as serialized keys.
pub(super) struct Keys {
    only: Option<Vec<Vec<u8>>>,
    exclude: Vec<Vec<u8>>,
}

impl Keys {
    pub(super) fn resolve(a: &PartitionsArgs, ctx: &KeyCtx) -> CmdResult<Keys> {
        let parse = |k: &String| {
            ctx.parse_key(k)
                .map_err(|e| CmdError::Usage(format!("--key {k:?}: {e}")))
        };
        let only = if a.key.is_empty() {
            None
        } else {
            Some(a.key.iter().map(parse).collect::<CmdResult<Vec<_>>>()?)
        };
        let exclude = a.exclude_key.iter().map(parse).collect::<CmdResult<_>>()?;
        Ok(Keys { only, exclude })
    }

    fn wants(&self, key: &[u8]) -> bool {
        self.only
            .as_ref()
            .is_none_or(|o| o.iter().any(|k| k == key))
            && !self.exclude.iter().any(|k| k == key)
    }
}

/// Maps uncompressed Data.db positions to file positions, for sizes on disk.
struct DiskMap {
    info: Option<CompressionInfo>,
    file_len: u64,
}

impl DiskMap {
    fn open(sst: &Sstable) -> CmdResult<DiskMap> {
        let file_len = sst
            .io
            .len(Component::Data)
            .map_err(|e| e.in_file(&sst.data_path()))?;
        let info = if sst.has(Component::CompressionInfo) {
            let b = sst.read_component(Component::CompressionInfo)?;
            Some(
                CompressionInfo::parse(&b, &sst.features())
                    .map_err(|e| e.in_file(&sst.path(Component::CompressionInfo)))?,
            )
        } else {
            None
        };
        Ok(DiskMap { info, file_len })
    }

    /// The file position `pos` falls at, pro-rated inside its chunk.
    fn file_pos(&self, pos: u64) -> u64 {
        let Some(ci) = &self.info else { return pos };
        let Some(i) = ci.chunk_for(pos) else {
            return self.file_len;
        };
        let start = ci.chunk_offsets[i];
        let end = ci
            .chunk_offsets
            .get(i + 1)
            .copied()
            .unwrap_or(self.file_len)
            .max(start);
        let len = ci.chunk_length.max(1) as u64;
        let within = pos - ci.chunk_start(i);
        start + ((end - start) as u128 * within as u128 / len as u128) as u64
    }

    fn size(&self, start: u64, end: u64) -> u64 {
        self.file_pos(end).saturating_sub(self.file_pos(start))
    }
}

/// Uncompressed and on-disk bytes of Data.db.
pub(super) type Sizes = (u64, u64);

/// What the reading hands on, in Data.db order.
pub(super) enum Emit<'a> {
    /// A partition: its stats, key and size on disk.
    Partition(PartitionStats, &'a [u8], u64),
    /// `count` records that the threads reading them filtered and rendered
    /// ([`RenderFn`]), one after another.
    Rendered(&'a [u8], u64),
}

/// Takes what the reading hands on ([`Emit`]).
pub(super) type EmitFn<'a> = dyn FnMut(Emit<'_>) -> CmdResult<()> + 'a;

/// Takes each partition read: its stats, key and size on disk.
type PartitionFn<'a> = dyn FnMut(PartitionStats, &[u8], u64) -> CmdResult<()> + 'a;

/// Renders a partition's record after those already in the buffer (the
/// records of one unit), on the thread that read it; false when it is not
/// listed (then what it wrote is dropped).
pub(super) type RenderFn<'a> =
    dyn Fn(&PartitionStats, &[u8], u64, &mut Vec<u8>) -> std::io::Result<bool> + Sync + 'a;

/// Decode every partition of Data.db into `summary`, on `threads` threads
/// when it can be cut into units (the partitions still reach `emit` in
/// Data.db order). Those threads also `render` the records and count them
/// in a summary per unit, work that would otherwise hold the calling
/// thread longer than the decoding holds the others.
pub(super) fn from_data(
    sst: &Sstable,
    (keys, render): (&Keys, Option<&RenderFn<'_>>),
    now: i64,
    bar: bool,
    threads: usize,
    (summary, emit): (&mut Summary, &mut EmitFn<'_>),
) -> CmdResult<Sizes> {
    let st = crate::render::read_statistics(sst)?;
    let header = sst.data_header(&st)?;
    if let Some(e) = crate::truncation::data_shorter_than_index(sst, &st) {
        return Err(e.into());
    }
    let disk = DiskMap::open(sst)?;
    let mut bar = progress(bar);
    let data_len = DataSource::open(sst)?.data_len();
    if threads > 1 {
        let table = Table::new(&header, sst.partitioner(&st)?, now);
        // Stats per partition are small: a unit's are held whole. An index
        // that cannot be read is not cut by: one thread reads Data.db alone.
        let units = engine::units(sst, &table, crate::sink::pieces::unit_bytes());
        if let Some(units) = units.ok().flatten() {
            let ctx = (&header, &disk);
            from_units(
                sst,
                ctx,
                &units,
                (keys, render),
                now,
                threads,
                &mut bar,
                (summary, emit),
            )?;
            bar.finish();
            return Ok((data_len, disk.file_len));
        }
    }
    let mut reader = ScanReader::new(sst, &header)?;
    let all = DataPos(0)..DataPos(u64::MAX);
    scan(
        sst,
        &mut reader,
        &disk,
        keys,
        now,
        all,
        &mut |p| bar.set(p, data_len),
        &mut counted(summary, emit),
    )?;
    bar.finish();
    Ok((data_len, disk.file_len))
}

/// `emit`, each partition counted in `summary` first.
fn counted<'a, 'b>(
    summary: &'a mut Summary,
    emit: &'a mut EmitFn<'b>,
) -> impl FnMut(PartitionStats, &[u8], u64) -> CmdResult<()> + use<'a, 'b> {
    move |stats, key, on_disk| {
        summary.add(&stats);
        emit(Emit::Partition(stats, key, on_disk))
    }
}

/// A unit's partitions, as [`from_units`] hands them on: each one's stats,
/// key (a range of the unit's bytes) and size on disk, or, when the thread
/// rendered them, no partitions and the bytes of the listed records with
/// their count; then their summary, and where the unit's scan stopped, or
/// the error it ended with. One buffer of bytes per unit, not one per
/// partition: the calling thread frees what the reading thread allocated,
/// and a million small allocations cost more than the rendering they carry.
type UnitDone = (Vec<Partition>, (Vec<u8>, u64), Summary, CmdResult<DataPos>);

/// One partition of a [`UnitDone`].
struct Partition {
    stats: PartitionStats,
    key: std::ops::Range<usize>,
    on_disk: u64,
}

/// [`from_data`] on several threads: each decodes units of whole
/// partitions ([`engine::units`]), their stats are emitted in order and
/// the units' summaries merged into `summary` in order.
#[allow(clippy::too_many_arguments)]
fn from_units(
    sst: &Sstable,
    (header, disk): (&SerializationHeader, &DiskMap),
    units: &[engine::Unit],
    (keys, render): (&Keys, Option<&RenderFn<'_>>),
    now: i64,
    threads: usize,
    bar: &mut Progress,
    (summary, emit): (&mut Summary, &mut EmitFn<'_>),
) -> CmdResult<()> {
    let reopen = sst.reopener();
    let data_path = sst.data_path();
    let init = || -> Result<(Sstable, SerializationHeader, DiskMap), Option<CmdError>> {
        let s = reopen.open().map_err(|e| Some(e.into()))?;
        let st = crate::render::read_statistics(&s).map_err(|e| Some(e.into()))?;
        let header = s.data_header(&st).map_err(|e| Some(e.into()))?;
        let disk = DiskMap::open(&s).map_err(Some)?;
        Ok((s, header, disk))
    };
    type Opened = Result<(Sstable, SerializationHeader, DiskMap), Option<CmdError>>;
    // The vectors of units already emitted, for the next units.
    let (partitions, buffers) = (Buffers::<Partition>::default(), Buffers::default());
    let work = |s: &mut Opened, i: usize| -> UnitDone {
        let mut got = partitions.get();
        let (mut bytes, mut listed) = (buffers.get(), 0);
        let mut counts = Summary::default();
        let r = match s {
            Ok((sst, header, disk)) => ScanReader::new(sst, header)
                .map_err(CmdError::from)
                .and_then(|mut reader| {
                    let u = &units[i];
                    reader.seek_partition(u.start)?;
                    scan(
                        sst,
                        &mut reader,
                        disk,
                        keys,
                        now,
                        u.start..u.end,
                        &mut |_| {},
                        &mut |stats, k, on_disk| {
                            counts.add(&stats);
                            let start = bytes.len();
                            // Rendered here, the calling thread only writes
                            // the unit's records out.
                            if let Some(render) = render {
                                match render(&stats, k, on_disk, &mut bytes) {
                                    Ok(true) => listed += 1,
                                    Ok(false) => bytes.truncate(start),
                                    Err(e) => return Err(CmdError::Output(e)),
                                }
                                return Ok(());
                            }
                            bytes.extend_from_slice(k);
                            got.push(Partition {
                                stats,
                                key: start..bytes.len(),
                                on_disk,
                            });
                            Ok(())
                        },
                    )
                }),
            Err(e) => Err(crate::sink::pieces::not_reopened(e, &data_path)),
        };
        (got, (bytes, listed), counts, r)
    };
    let total = units.last().map_or(0, |u| u.end.0);
    let mut result = Ok(());
    // Where to read on from on this thread: a unit that stopped elsewhere
    // than where the next one starts shows the index wrong there (damaged).
    let mut rest = None;
    let mut take = |i: usize, (mut got, (bytes, listed), counts, r): UnitDone| -> bool {
        bar.set(units[i].end.0, total);
        if matches!(r, Ok(end) if end != units[i].end) {
            rest = Some(units[i].start);
            return false;
        }
        summary.merge(&counts);
        if listed > 0 {
            if let Err(e) = emit(Emit::Rendered(&bytes, listed)) {
                result = Err(e);
                return false;
            }
        }
        for p in got.drain(..) {
            if let Err(e) = emit(Emit::Partition(p.stats, &bytes[p.key], p.on_disk)) {
                result = Err(e);
                return false;
            }
        }
        partitions.put(got);
        buffers.put(bytes);
        match r {
            Err(e) => {
                result = Err(e);
                false
            }
            Ok(_) => true,
        }
    };
    // The threads' reads count as the sstable's (`--io-stats`).
    let io = std::sync::Mutex::new(sstkit_format::io::IoStats::default());
    let done = |s: Opened| {
        if let Ok((s, ..)) = s {
            *io.lock().unwrap_or_else(|e| e.into_inner()) += &s.io.stats();
        }
    };
    engine::parallel::ordered(units.len(), threads, &init, &work, &done, &mut take);
    *sst.io.stats_mut() += &io.into_inner().unwrap_or_else(|e| e.into_inner());
    if let Some(start) = rest {
        // As a single thread reads it: Data.db alone, from a partition start.
        let mut reader = ScanReader::new(sst, header)?;
        reader.seek_partition(start)?;
        let all = start..DataPos(u64::MAX);
        let total = reader.data_len();
        scan(
            sst,
            &mut reader,
            disk,
            keys,
            now,
            all,
            &mut |p| bar.set(p, total),
            &mut counted(summary, emit),
        )?;
        return Ok(());
    }
    result
}

/// Decode the partitions from the reader's position up to the first that
/// starts at or after `range.end`, and hand each to `emit`.
#[allow(clippy::too_many_arguments)]
fn scan(
    sst: &Sstable,
    reader: &mut ScanReader<'_>,
    disk: &DiskMap,
    keys: &Keys,
    now: i64,
    range: std::ops::Range<DataPos>,
    bar: &mut dyn FnMut(u64),
    emit: &mut PartitionFn<'_>,
) -> CmdResult<DataPos> {
    let end_len = reader.end_marker_len();
    let mut key = Vec::new();
    loop {
        bar(reader.position().0);
        if reader.next_position() >= range.end {
            break;
        }
        let mut stats = match reader.next_fragment()? {
            None => break,
            Some(Fragment::PartitionStart {
                key: k,
                deletion,
                position,
                ..
            }) => {
                key.clear();
                key.extend_from_slice(k);
                PartitionStats::new(position.0, &deletion)
            }
            Some(other) => {
                return Err(Error::at(
                    ErrorKind::BadValue("expected a partition start".into()),
                    Component::Data,
                    other.position().0,
                    "partition",
                )
                .in_file(&sst.data_path())
                .into())
            }
        };
        if !keys.wants(&key) {
            reader.skip_partition()?;
            continue;
        }
        loop {
            // Matched in place (see `Walk::body` in format's validate).
            let next = reader.next_fragment();
            let f = match next {
                Ok(Some(ref f)) => f,
                Ok(None) => {
                    return Err(Error::at(
                        ErrorKind::UnexpectedEof { need: 1, have: 0 },
                        Component::Data,
                        reader.position().0,
                        "end of partition",
                    )
                    .in_file(&sst.data_path())
                    .into())
                }
                Err(e) => {
                    let key = format!("{} (0x{})", stats_key(sst, &key), hex(&key));
                    return Err(e.in_partition(key).into());
                }
            };
            // A large partition moves the bar too.
            bar(f.position().0);
            if let Fragment::PartitionEnd { position } = *f {
                stats.size = position.0 + end_len - stats.offset;
                break;
            }
            stats.add(f, now);
            if let Ok(Some(f)) = next {
                let spare = f.into_spare();
                reader.recycle(spare);
            }
        }
        let on_disk = disk.size(stats.offset, stats.offset + stats.size);
        emit(stats, &key, on_disk)?;
    }
    Ok(reader.next_position())
}

/// The bar of one sstable's pass, or none.
fn progress(show: bool) -> Progress {
    if show {
        Progress::new("partitions")
    } else {
        Progress::hidden()
    }
}

fn stats_key(sst: &Sstable, key: &[u8]) -> String {
    KeyCtx::read(sst)
        .map(|c| c.key_text(key))
        .unwrap_or_else(|_| hex(key))
}

/// Reads partition headers (key, deletion) from Data.db, for what the index
/// does not say.
struct Headers<'s> {
    src: DataSource<'s>,
    sst: &'s Sstable,
}

impl<'s> Headers<'s> {
    fn open(sst: &'s Sstable) -> CmdResult<Headers<'s>> {
        let mut src = DataSource::open(sst)?;
        src.set_read_kind(ReadKind::Point);
        Ok(Headers { src, sst })
    }

    fn data_len(&self) -> u64 {
        self.src.data_len()
    }

    /// Key and partition deletion of the partition at `pos`.
    fn at(&mut self, pos: u64) -> CmdResult<(Vec<u8>, DeletionTime)> {
        let path = self.sst.data_path();
        let rest = self.data_len().saturating_sub(pos);
        if rest < 2 {
            return Err(Error::at(
                ErrorKind::UnexpectedEof {
                    need: 2,
                    have: rest,
                },
                Component::Data,
                pos,
                "partition key length",
            )
            .in_file(&path)
            .into());
        }
        let b = self
            .src
            .read_range(DataPos(pos), 2)
            .map_err(|e| e.in_file(&path))?;
        let n = u16::from_be_bytes([b[0], b[1]]) as u64;
        // The deletion takes at most 12 bytes; the partition's end is never closer than that.
        let want = (2 + n + 12).min(rest);
        let b = self
            .src
            .read_range(DataPos(pos), want as usize)
            .map_err(|e| e.in_file(&path))?;
        let mut cur = Cur::new(&b, Component::Data, pos);
        let key = cur
            .short_bytes("partition key")
            .map_err(|e| e.in_file(&path))?;
        let key = key.to_vec();
        let del =
            DeletionTime::decode(&mut cur, &self.sst.features()).map_err(|e| e.in_file(&path))?;
        Ok((key, del))
    }
}

/// A partition found in the index, sized when the next one is found.
struct Pending {
    key: Vec<u8>,
    pos: u64,
    deletion: Option<DeletionTime>,
}

/// Sizes from the index; partition headers from Data.db only where needed.
pub(super) fn from_index(
    sst: &Sstable,
    keys: &Keys,
    bar: bool,
    (summary, emit): (&mut Summary, &mut EmitFn<'_>),
) -> CmdResult<Sizes> {
    let emit = &mut counted(summary, emit);
    let disk = DiskMap::open(sst)?;
    let mut headers = Headers::open(sst)?;
    let data_len = headers.data_len();
    let mut pending: Option<Pending> = None;
    let mut bar = progress(bar);
    let mut finish = |p: Pending, end: u64, headers: &mut Headers<'_>| -> CmdResult<()> {
        bar.set(p.pos, data_len);
        if !keys.wants(&p.key) {
            return Ok(());
        }
        if end < p.pos || end > data_len {
            return Err(Error::at(
                ErrorKind::BadValue(format!(
                    "the index lists partitions at {} then {end}, not in order within the \
                     {data_len}-byte Data.db",
                    p.pos
                )),
                Component::Data,
                p.pos.min(data_len),
                "partition",
            )
            .in_file(&sst.data_path())
            .into());
        }
        let deletion = match p.deletion {
            Some(d) => d,
            None => headers.at(p.pos)?.1,
        };
        let mut stats = PartitionStats::new(p.pos, &deletion);
        stats.size = end - p.pos;
        emit(stats, &p.key, disk.size(p.pos, end))
    };
    if sst.features().trie_index {
        sst.require(Component::Partitions)?;
        let locate = |e: Error| match e.component {
            Some(c) => e.in_file(&sst.path(c)),
            None => e,
        };
        let footer = read_footer(&sst.io).map_err(locate)?;
        let mut src = IoSource::new(&sst.io, Component::Partitions)?;
        let flavor = sstkit_format::bti::index::flavor_of(sst);
        let mut rows: Option<IoSource<'_>> = None;
        let mut failed: Option<CmdError> = None;
        for_each_trie_entry(&mut src, footer.root, &mut |e| {
            let next = match e.payload.position {
                PartitionPosition::Data(p) => {
                    let (key, deletion) = match headers.at(p) {
                        Ok(x) => x,
                        Err(err) => {
                            failed = Some(err);
                            return Ok(false);
                        }
                    };
                    Pending {
                        key,
                        pos: p,
                        deletion: Some(deletion),
                    }
                }
                PartitionPosition::Rows(off) => {
                    if rows.is_none() {
                        rows = Some(IoSource::new(&sst.io, Component::Rows)?);
                    }
                    let Some(r) = rows.as_mut() else {
                        return Ok(false);
                    };
                    let r = RowsEntry::read(r, off, flavor)?;
                    Pending {
                        key: r.key,
                        pos: r.data_position,
                        deletion: Some(r.deletion),
                    }
                }
            };
            if let Some(p) = pending.replace(next) {
                let end = pending.as_ref().map_or(data_len, |n| n.pos);
                if let Err(err) = finish(p, end, &mut headers) {
                    failed = Some(err);
                    return Ok(false);
                }
            }
            Ok(true)
        })
        .map_err(locate)?;
        if let Some(e) = failed {
            return Err(e);
        }
    } else {
        sstkit_format::index::for_each_entry::<CmdError>(sst, |e| {
            let next = Pending {
                key: e.key.to_vec(),
                pos: e.position,
                deletion: e.promoted.as_ref().map(|p| p.deletion),
            };
            if let Some(p) = pending.replace(next) {
                finish(p, e.position, &mut headers)?;
            }
            Ok(())
        })?;
    }
    if let Some(p) = pending.take() {
        finish(p, data_len, &mut headers)?;
    }
    Ok((data_len, disk.file_len))
}
