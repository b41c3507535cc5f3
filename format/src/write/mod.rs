//! The sstable writer: streams fragments (what the readers yield) into a
//! complete sstable of a Cassandra row-format version: BIG `ma`..`oa`
//! (Data.db, Index.db with promoted indexes, Summary.db) or BTI `da`
//! (Data.db, Partitions.db, Rows.db), with Statistics.db,
//! CompressionInfo.db or CRC.db, Digest.crc32, a bloom filter when a
//! [`KeyFilter`] is given, and TOC.txt.
//!
//! Memory stays flat as partitions grow: rows are encoded one at a time into
//! a reused buffer and go straight to the chunked Data.db output; a
//! partition keeps only its promoted index (one IndexInfo per
//! `column_index_size` bytes); statistics are folded in as fragments pass.
//!
//! Every component is written under a temporary name (`tmp-sstkit-…`) and
//! renamed once all are complete, TOC.txt last; any error, or dropping an
//! unfinished writer, removes every file it created.
//!
//! The target serialization header is the source's: its `EncodingStats`
//! are the delta bases of every timestamp and deletion time written, and
//! its column lists index the rows' columns (§3.6, §3.8).
//!
//! A Scylla shadowable row deletion (materialized views) is written as
//! Scylla writes it, with a Scylla.db naming the feature, in the versions
//! Scylla writes (`mc`, `md`, `me`); elsewhere it is refused, never dropped.
//!
//! Other writers of components: [`bti`], the BTI trie indexes of `da`
//! sstables (Partitions.db, Rows.db); [`filter`], the bloom filter.
//! [`sink`] makes writers an engine sink, for the commands that copy
//! partitions from an sstable.

pub mod bloom;
pub mod bti;
pub mod copy;
pub mod filter;
pub mod index;
mod indexes;
pub mod out;
pub mod pending;
pub mod purge;
pub mod rows;
pub mod salvage;
pub mod sink;
pub mod stats;

#[cfg(test)]
mod tests;

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::data::{DataSchema, Fragment, RangeTombstoneMarker, Row};
use crate::deletion::DeletionTime;
use crate::error::{Error, ErrorKind, Result};
use crate::statistics::SerializationHeader;
use crate::version::Version;
use crate::Component;

pub use out::{ChunkWork, Compression};
pub use stats::KeptMetadata;

use indexes::Indexes;
use out::{io_err, DataOut};
use rows::{Deltas, RowEncoder};
use stats::Collector;

/// A bloom filter under construction (Filter.db).
pub trait KeyFilter {
    /// Add one partition key.
    fn add(&mut self, key: &[u8]);
    /// The Filter.db bytes.
    fn serialize(&self) -> Vec<u8>;
}

/// How to write.
#[derive(Debug, Clone)]
pub struct WriterOptions {
    /// Target version (row format: BIG `ma`..`oa`, BTI `da`).
    pub version: Version,
    /// Data.db compression.
    pub compression: Compression,
    /// Uncompressed bytes per compressed chunk (power of two).
    pub chunk_length: u32,
    /// Row-index block size (`column_index_size`).
    pub column_index_size: u64,
    /// Bloom filter false-positive chance recorded in Statistics.db.
    pub bloom_filter_fp_chance: f64,
    /// Summary.db sampling interval (`min_index_interval`).
    pub min_index_interval: u32,
    /// Where Data.db's chunks are compressed, checksummed and written; the
    /// bytes are the same either way.
    pub chunk_work: ChunkWork,
}

/// Cassandra's default `column_index_size` for BIG (64 KiB).
pub const DEFAULT_COLUMN_INDEX_SIZE: u64 = 64 * 1024;
/// Cassandra's default `column_index_size` for BTI (16 KiB).
pub const DEFAULT_BTI_COLUMN_INDEX_SIZE: u64 = 16 * 1024;
/// Cassandra's default chunk length (16 KiB).
pub const DEFAULT_CHUNK_LENGTH: u32 = 16 * 1024;

impl WriterOptions {
    /// Cassandra's defaults for `version`: LZ4, 16 KiB chunks, index
    /// blocks of 64 KiB (BIG) or 16 KiB (BTI), fp chance 0.01, index
    /// interval 128.
    pub fn new(version: Version) -> WriterOptions {
        WriterOptions {
            version,
            compression: Compression::Lz4,
            chunk_length: DEFAULT_CHUNK_LENGTH,
            column_index_size: default_column_index_size(version),
            bloom_filter_fp_chance: 0.01,
            min_index_interval: 128,
            chunk_work: ChunkWork::Auto,
        }
    }

    /// Refuse what sstkit does not write: another format than Cassandra's
    /// row format (BIG `ma`..`oa`, BTI `da`), a chunk length that is not a
    /// power of two >= 1 KiB, a zero index block size.
    pub fn check(&self) -> Result<()> {
        let f = self.version.features();
        if f.legacy_cells || self.version.is_scylla_only() {
            return Err(unsupported(format!(
                "sstkit writes the row-format versions ma..oa (BIG) and da (BTI), not {}",
                self.version
            )));
        }
        if self.compression != Compression::None
            && (!self.chunk_length.is_power_of_two() || self.chunk_length < 1024)
        {
            return Err(unsupported(format!(
                "chunk length {} is not a power of two >= 1024",
                self.chunk_length
            )));
        }
        if self.column_index_size == 0 {
            return Err(unsupported("column index size must be > 0".into()));
        }
        Ok(())
    }
}

/// Cassandra's default `column_index_size` for the format of `version`.
pub fn default_column_index_size(version: Version) -> u64 {
    if version.features().trie_index {
        DEFAULT_BTI_COLUMN_INDEX_SIZE
    } else {
        DEFAULT_COLUMN_INDEX_SIZE
    }
}

fn unsupported(m: String) -> Error {
    Error::new(ErrorKind::Unsupported(m), "writer options")
}

/// What a finished writer produced.
#[derive(Debug, Clone)]
pub struct Written {
    /// Path of Data.db.
    pub data_path: PathBuf,
    /// Every file written, TOC.txt last.
    pub files: Vec<PathBuf>,
    /// Partitions written.
    pub partitions: u64,
    /// Rows written (static rows included).
    pub rows: u64,
    /// Uncompressed Data.db bytes.
    pub data_length: u64,
    /// Data.db bytes on disk.
    pub data_file_length: u64,
    /// Bytes of all components.
    pub total_bytes: u64,
}

struct Partition {
    key: Vec<u8>,
    deletion: DeletionTime,
    start: u64,
    /// Partition-relative start of the previous unfiltered (0 = none yet).
    prev: u64,
    open: Option<DeletionTime>,
    /// The static row is written, or the table has none.
    static_done: bool,
}

/// Streams fragments into one sstable. See the module doc.
pub struct SstableWriter {
    dir: PathBuf,
    prefix: String,
    opts: WriterOptions,
    features: crate::Features,
    header: SerializationHeader,
    schema: DataSchema,
    deltas: Deltas,
    kept: KeptMetadata,
    data: Option<DataOut>,
    indexes: Option<Indexes>,
    created: Vec<PathBuf>,
    finished: bool,
    collector: Collector,
    enc: RowEncoder,
    buf: Vec<u8>,
    filter: Option<Box<dyn KeyFilter>>,
    part: Option<Partition>,
    last_key: Option<Vec<u8>>,
    /// Orders the partitions (`None` for a partitioner sstkit cannot order).
    partitioner: Option<crate::token::Partitioner>,
    partitions: u64,
    rows: u64,
    /// Rows written with a Scylla shadowable deletion (Scylla.db is written then).
    scylla_shadowable_rows: u64,
}

impl std::fmt::Debug for SstableWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SstableWriter")
            .field("dir", &self.dir)
            .field("prefix", &self.prefix)
            .field("partitions", &self.partitions)
            .finish()
    }
}

use pending::TMP;

/// The next free integer generation in `dir` (1 when empty).
pub fn next_generation(dir: &Path) -> Result<u64> {
    let mut max = 0u64;
    let rd = std::fs::read_dir(dir).map_err(|e| io_err(e, dir))?;
    for e in rd.flatten() {
        let name = e.file_name();
        let name = name.to_string_lossy();
        let name = name.strip_prefix(TMP).unwrap_or(&name);
        let mut parts = name.splitn(4, '-');
        if let (Some(_v), Some(g), Some(_f)) = (parts.next(), parts.next(), parts.next()) {
            if let Ok(g) = g.parse::<u64>() {
                max = max.max(g);
            }
        }
    }
    Ok(max + 1)
}

impl SstableWriter {
    /// Start an sstable `<version>-<generation>-big-*` (`-bti-*` for `da`)
    /// in `dir`, with the source's serialization `header` and `kept`
    /// metadata.
    pub fn create(
        dir: &Path,
        generation: u64,
        header: &SerializationHeader,
        kept: KeptMetadata,
        opts: WriterOptions,
        filter: Option<Box<dyn KeyFilter>>,
    ) -> Result<SstableWriter> {
        opts.check()?;
        let features = opts.version.features();
        let kind = if features.trie_index {
            crate::version::FormatKind::Bti
        } else {
            crate::version::FormatKind::Big
        };
        let prefix = format!("{}-{}-{}-", opts.version, generation, kind.name());
        for c in [Component::Toc, Component::Data] {
            let p = dir.join(format!("{prefix}{}", c.suffix()));
            if p.exists() {
                return Err(Error::new(
                    ErrorKind::Unsupported(format!("{} exists: not overwriting", p.display())),
                    "output sstable",
                ));
            }
        }
        // A header synthesized for pre-3.0 data (`legacy_header`) has zero
        // minimums and no stored deltas: write it as "no stats" (the
        // epochs), which the stored zero deltas then mean.
        let mut header = header.clone();
        if header.raw_deltas == (0, 0, 0) {
            use crate::statistics::header::{DELETION_TIME_EPOCH, TIMESTAMP_EPOCH};
            header.min_timestamp = TIMESTAMP_EPOCH;
            header.min_local_deletion_time = DELETION_TIME_EPOCH;
            header.min_ttl = 0;
        }
        let header = &header;
        let schema = DataSchema::new(header, features);
        let partitioner = crate::token::Partitioner::parse(&kept.partitioner).ok();
        let deltas = Deltas(schema.deltas);
        let mut created = Vec::new();
        let tmp = |suffix: &str| dir.join(format!("{TMP}{prefix}{suffix}"));
        let setup = indexes::Setup {
            tmp: &tmp,
            header,
            partitioner: partitioner.as_ref(),
            column_index_size: opts.column_index_size,
            min_index_interval: opts.min_index_interval,
            features: &features,
        };
        let indexes = Indexes::create(&setup, &mut created).and_then(|ix| {
            let data_tmp = tmp("Data.db");
            let data = DataOut::create(
                &data_tmp,
                opts.compression.clone(),
                opts.chunk_length,
                opts.chunk_work,
            )?;
            created.push(data_tmp);
            Ok((ix, data))
        });
        let (indexes, data) = match indexes {
            Ok(x) => x,
            Err(e) => {
                for p in &created {
                    pending::remove(p);
                }
                return Err(e);
            }
        };
        Ok(SstableWriter {
            dir: dir.to_path_buf(),
            prefix,
            features,
            deltas,
            kept,
            data: Some(data),
            indexes: Some(indexes),
            created,
            finished: false,
            collector: Collector::new(header),
            enc: RowEncoder::default(),
            buf: Vec::with_capacity(1 << 16),
            filter,
            part: None,
            last_key: None,
            partitioner,
            partitions: 0,
            rows: 0,
            scylla_shadowable_rows: 0,
            header: header.clone(),
            schema,
            opts,
        })
    }

    /// The final path of component `suffix`.
    pub fn path_of(&self, suffix: &str) -> PathBuf {
        self.dir.join(format!("{}{suffix}", self.prefix))
    }

    fn data(&mut self) -> Result<&mut DataOut> {
        if self.data.is_none() {
            return Err(self.order_error("writing after finish"));
        }
        self.data
            .as_mut()
            .ok_or_else(|| Error::new(ErrorKind::BadValue("no Data.db".into()), "writer"))
    }

    /// Uncompressed bytes written to Data.db so far.
    pub fn data_position(&self) -> u64 {
        self.data.as_ref().map(|d| d.position()).unwrap_or(0)
    }

    /// Data.db bytes on disk of the whole chunks written so far.
    pub fn data_file_len(&mut self) -> Result<u64> {
        match self.data.as_mut() {
            Some(d) => d.file_len(),
            None => Ok(0),
        }
    }

    /// Stop Data.db's worker thread and free its buffers (an output that
    /// gets little more, such as a full one of split): what is still
    /// written to it is compressed in the calling thread.
    pub fn park(&mut self) -> Result<()> {
        match self.data.as_mut() {
            Some(d) => d.park(),
            None => Ok(()),
        }
    }

    /// `data_file_len() >= n`, usually without waiting for the chunks in
    /// flight to be written.
    pub fn data_file_len_at_least(&mut self, n: u64) -> Result<bool> {
        match self.data.as_mut() {
            Some(d) => d.file_len_at_least(n),
            None => Ok(false),
        }
    }

    /// Partitions written so far.
    pub fn partitions(&self) -> u64 {
        self.partitions
    }

    fn write_bytes(&mut self, f: impl FnOnce(&mut Self, &mut Vec<u8>)) -> Result<()> {
        let mut buf = std::mem::take(&mut self.buf);
        buf.clear();
        f(self, &mut buf);
        let r = self.data()?.write(&buf);
        self.buf = buf;
        r
    }

    /// Write one fragment. Partitions must arrive in token order, each
    /// `PartitionStart`, rows and markers in clustering order, `PartitionEnd`.
    pub fn write(&mut self, f: &Fragment<'_>) -> Result<()> {
        match f {
            Fragment::PartitionStart { key, deletion, .. } => self.partition_start(key, deletion),
            Fragment::StaticRow(r) => self.static_row(r),
            Fragment::Row(r) => self.row(r),
            Fragment::Marker(m) => self.marker(m),
            Fragment::PartitionEnd { .. } => self.partition_end(),
        }
    }

    /// Start a partition: after the previous one's key in token order.
    pub fn partition_start(&mut self, key: &[u8], deletion: &DeletionTime) -> Result<()> {
        if self.part.is_some() {
            return Err(self.order_error("a partition starts before the previous one ended"));
        }
        if key.len() > u16::MAX as usize {
            return Err(self.order_error("partition key longer than 65535 bytes"));
        }
        if let Some(last) = &self.last_key {
            let ord = match &self.partitioner {
                Some(p) => p.compare_decorated(last, key),
                None if last.as_slice() == key => std::cmp::Ordering::Equal,
                None => std::cmp::Ordering::Less,
            };
            if ord != std::cmp::Ordering::Less {
                // C* refuses it too ("Last written key >= current key").
                return Err(
                    self.order_error("partition key not after the previous one (token order)")
                );
            }
        }
        let start = self.data_position();
        self.collector.partition_start(key, deletion);
        let has_static = self.schema.has_static_row();
        self.part = Some(Partition {
            key: key.to_vec(),
            deletion: *deletion,
            start,
            prev: 0,
            open: None,
            static_done: !has_static,
        });
        self.write_bytes(|w, buf| rows::encode_partition_header(buf, &w.schema, key, deletion))?;
        if !has_static {
            let h = self.data_position() - start;
            self.indexes()?.rows_start(h);
        }
        Ok(())
    }

    /// The partition's static row, before its rows and markers.
    pub fn static_row(&mut self, r: &Row<'_>) -> Result<()> {
        let start = match self.part.as_mut() {
            Some(p) if !p.static_done && p.prev == 0 => {
                p.static_done = true;
                p.start
            }
            _ => return Err(self.order_error("a static row out of place")),
        };
        self.check_scylla_shadowable(r)?;
        self.write_bytes(|w, buf| w.enc.row(buf, &w.schema, &w.deltas, r, 0))?;
        self.collector.row(r);
        if !r.cells.is_empty() || r.liveness.is_some() || r.deletion.is_some() {
            self.rows += 1;
        }
        let h = self.data_position() - start;
        self.indexes()?.rows_start(h);
        Ok(())
    }

    /// A clustered row, after the previous row or marker in clustering order.
    pub fn row(&mut self, r: &Row<'_>) -> Result<()> {
        self.ensure_static()?;
        let (start, prev) = match self.part.as_ref() {
            Some(p) => (p.start, p.prev),
            None => return Err(self.order_error("a row outside a partition")),
        };
        self.check_scylla_shadowable(r)?;
        let pos = self.data_position() - start;
        let prev_size = if prev == 0 { pos } else { pos - prev };
        self.write_bytes(|w, buf| w.enc.row(buf, &w.schema, &w.deltas, r, prev_size))?;
        let end = self.data_position() - start;
        let open = self.part.as_ref().and_then(|p| p.open);
        let features = self.features;
        self.indexes()?
            .unfiltered(&r.clustering, pos, end, open, open, &features)?;
        if let Some(p) = self.part.as_mut() {
            p.prev = pos;
        }
        self.collector.row(r);
        self.rows += 1;
        Ok(())
    }

    /// A range tombstone bound or boundary, in clustering order.
    pub fn marker(&mut self, m: &RangeTombstoneMarker<'_>) -> Result<()> {
        self.ensure_static()?;
        let (start, prev) = match self.part.as_ref() {
            Some(p) => (p.start, p.prev),
            None => return Err(self.order_error("a marker outside a partition")),
        };
        let pos = self.data_position() - start;
        let prev_size = if prev == 0 { pos } else { pos - prev };
        self.write_bytes(|w, buf| w.enc.marker(buf, &w.schema, &w.deltas, m, prev_size))?;
        let end = self.data_position() - start;
        let open = m.open_deletion();
        let mut before = None;
        if let Some(p) = self.part.as_mut() {
            p.prev = pos;
            before = std::mem::replace(&mut p.open, open);
        }
        let features = self.features;
        self.indexes()?
            .unfiltered(&m.bound, pos, end, before, open, &features)?;
        self.collector.marker(m);
        Ok(())
    }

    /// End the partition.
    pub fn partition_end(&mut self) -> Result<()> {
        self.ensure_static()?;
        let Some(p) = self.part.take() else {
            return Err(self.order_error("a partition end outside a partition"));
        };
        self.data()?
            .write(&[crate::data::model::flags::END_OF_PARTITION])?;
        let end = self.data_position() - p.start;
        let features = self.features;
        self.indexes()?
            .partition_end(&p.key, p.start, &p.deletion, end, &features)
            .map_err(|e| e.in_file(&self.path_of("Data.db")))?;
        self.collector.partition_end(&p.key, end);
        if let Some(fb) = self.filter.as_mut() {
            fb.add(&p.key);
        }
        self.partitions += 1;
        self.last_key = Some(p.key);
        Ok(())
    }

    /// Tables with static columns have a static row in every partition
    /// (§3.1): write an empty one when the source gave none.
    fn ensure_static(&mut self) -> Result<()> {
        if self.part.as_ref().is_none_or(|p| p.static_done) {
            return Ok(());
        }
        let empty = crate::data::Row {
            position: crate::data::DataPos(0),
            size: 0,
            clustering: crate::clustering::ClusteringPrefix {
                kind: crate::clustering::BoundKind::StaticClustering,
                values: Vec::new(),
            },
            flags: crate::data::RowFlags {
                flags: crate::data::model::flags::EXTENSION_FLAG,
                ext: crate::data::model::flags::EXT_IS_STATIC,
            },
            row_size: 0,
            prev_unfiltered_size: 0,
            liveness: None,
            deletion: None,
            scylla_shadowable_deletion: None,
            cells: Vec::new(),
        };
        self.static_row(&empty)
    }

    /// Refuse a Scylla shadowable row deletion where no reader would see it
    /// (dropping it or making it regular changes what the view returns).
    ///
    /// Scylla reads one on clustering rows of its own versions only
    /// (`sstables/mx/reader.cc`); Cassandra's `UnfilteredSerializer`
    /// ignores extended flag 0x80 and would misread the row's bytes.
    fn check_scylla_shadowable(&mut self, r: &crate::data::Row<'_>) -> Result<()> {
        if r.scylla_shadowable_deletion.is_none() {
            return Ok(());
        }
        let why = if r.is_static() {
            "a Scylla shadowable row deletion on the static row: no sstable version \
             carries one there (Scylla reads it on clustering rows only)"
                .to_string()
        } else if !self.opts.version.is_written_by_scylla() {
            format!(
                "a Scylla shadowable row deletion (materialized view) cannot be written \
                 in {}: Cassandra's sstables have no such deletion; write mc, md or me",
                self.opts.version
            )
        } else {
            self.scylla_shadowable_rows += 1;
            return Ok(());
        };
        let key = self.part.as_ref().map(|p| hex(&p.key)).unwrap_or_default();
        Err(Error::new(ErrorKind::Unsupported(why), "")
            .in_component(Component::Data)
            .in_partition(key))
    }

    fn indexes(&mut self) -> Result<&mut Indexes> {
        match self.indexes.as_mut() {
            Some(ix) => Ok(ix),
            None => Err(Error::new(
                ErrorKind::BadValue("writing after finish".into()),
                "fragment order",
            )),
        }
    }

    fn order_error(&self, m: &str) -> Error {
        Error::new(ErrorKind::BadValue(m.to_string()), "fragment order")
            .in_component(Component::Data)
            .in_file(&self.path_of("Data.db"))
    }

    fn put_file(&mut self, suffix: &str, bytes: &[u8]) -> Result<()> {
        let p = self.dir.join(format!("{TMP}{}{suffix}", self.prefix));
        let mut f = pending::create(&p).map_err(|e| io_err(e, &p))?;
        self.created.push(p.clone());
        f.write_all(bytes).map_err(|e| io_err(e, &p))?;
        f.sync_all().map_err(|e| io_err(e, &p))?;
        Ok(())
    }

    /// Finish every component and rename them into place, TOC.txt last.
    pub fn finish(mut self) -> Result<Written> {
        if self.part.is_some() {
            return Err(self.order_error("the last partition has no end"));
        }
        let Some(data) = self.data.take() else {
            return Err(self.order_error("finished twice"));
        };
        let ds = data.finish(&self.features)?;
        let Some(indexes) = self.indexes.take() else {
            return Err(self.order_error("finished twice"));
        };
        let index_names = indexes.finish(&mut |suffix, bytes| self.put_file(suffix, bytes))?;
        let ratio = if self.opts.compression == Compression::None {
            -1.0
        } else if ds.data_length == 0 {
            0.0
        } else {
            // C* counts the payloads only, not the 4-byte chunk checksums.
            (ds.file_length - 4 * ds.chunks) as f64 / ds.data_length as f64
        };
        let stats = self.collector.statistics_db(
            &self.features,
            &self.header,
            &self.kept,
            self.opts.bloom_filter_fp_chance,
            ratio,
        );
        let (cc, cbytes) = ds.checksum_component.clone();
        self.put_file(cc.suffix(), &cbytes)?;
        self.put_file("Statistics.db", &stats)?;
        self.put_file("Digest.crc32", ds.digest.to_string().as_bytes())?;
        let mut toc: Vec<&str> = vec![
            cc.suffix(),
            "Data.db",
            "Digest.crc32",
            "Statistics.db",
            "TOC.txt",
        ];
        toc.extend(index_names);
        if let Some(fb) = self.filter.take() {
            self.put_file("Filter.db", &fb.serialize())?;
            toc.push("Filter.db");
        }
        if self.scylla_shadowable_rows > 0 {
            self.put_file("Scylla.db", &scylla_features_component())?;
            toc.push("Scylla.db");
        }
        toc.sort_unstable();
        let toc_text: String = toc.iter().map(|s| format!("{s}\n")).collect();
        self.put_file("TOC.txt", toc_text.as_bytes())?;

        // Rename into place, TOC.txt (the last created) last.
        let mut files = Vec::new();
        let mut total = 0u64;
        let created = self.created.clone();
        for tmp in &created {
            let name = tmp
                .file_name()
                .map(|n| n.to_string_lossy().to_string())
                .unwrap_or_default();
            let fin = self.dir.join(name.strip_prefix(TMP).unwrap_or(&name));
            pending::rename(tmp, &fin).map_err(|e| io_err(e, &fin))?;
            total += std::fs::metadata(&fin).map(|m| m.len()).unwrap_or(0);
            // From here on a failure must remove the final name too.
            self.created.retain(|p| p != tmp);
            self.created.push(fin.clone());
            files.push(fin);
        }
        if let Ok(d) = std::fs::File::open(&self.dir) {
            let _ = d.sync_all();
        }
        for p in &files {
            pending::keep(p);
        }
        self.finished = true;
        Ok(Written {
            data_path: self.path_of("Data.db"),
            files,
            partitions: self.partitions,
            rows: self.rows,
            data_length: ds.data_length,
            data_file_length: ds.file_length,
            total_bytes: total,
        })
    }
}

/// `0x` and the bytes of a partition key in hex, as errors name it.
fn hex(key: &[u8]) -> String {
    let digits: String = key.iter().map(|b| format!("{b:02x}")).collect();
    format!("0x{digits}")
}

/// Scylla.db with only its Features sub-component, which Scylla needs to
/// accept flag 0x80 (ShadowableTombstones).
///
/// The other bits tell Scylla the layout is Cassandra's: every fix but
/// CorrectLastPiBlockWidth, since the last promoted-index block here
/// counts the partition's end byte as Cassandra's does (`sstables/types.hh`
/// `sstable_feature`; Scylla.db is big-endian, `scylla.rs`).
fn scylla_features_component() -> Vec<u8> {
    use crate::scylla::ScyllaFeature;
    let features = ScyllaFeature::ALL
        .iter()
        .filter(|f| **f != ScyllaFeature::CorrectLastPiBlockWidth)
        .fold(0u64, |m, f| m | (1u64 << f.bit()));
    let mut out = Vec::with_capacity(20);
    out.extend_from_slice(&1u32.to_be_bytes()); // one sub-component
    out.extend_from_slice(&2u32.to_be_bytes()); // tag: Features
    out.extend_from_slice(&8u32.to_be_bytes()); // payload size
    out.extend_from_slice(&features.to_be_bytes());
    out
}

impl Drop for SstableWriter {
    fn drop(&mut self) {
        if !self.finished {
            // Close Data.db before removing it.
            self.data = None;
            for p in &self.created {
                pending::remove(p);
            }
        }
    }
}
