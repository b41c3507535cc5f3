//! Decoder entry points for fuzzing: each [`Target`] feeds arbitrary bytes
//! to one decoder (and everything that can be derived from its result), so
//! that a cargo-fuzz target, the regression replay and the property tests
//! exercise exactly the same code. A run must return (never panic, never
//! loop): errors are the expected outcome for most inputs.

use crate::clustering::{decode_bound, decode_clustering, decode_prefix};
use crate::component::Component;
use crate::compression::CompressionInfo;
use crate::cur::Cur;
use crate::data::{Fragment, ReaderOptions, ScanReader};
use crate::filter::BloomFilter;
use crate::index::IndexReader;
use crate::statistics::{ColumnDef, SerializationHeader, Statistics};
use crate::summary::Summary;
use crate::toc::Toc;
use crate::token::Partitioner;
use crate::types::CqlType;
use crate::version::{Features, Version};

use super::data::DataChecker;
use super::problem::Problems;

/// A decoder entry point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// TOC.txt.
    Toc,
    /// Summary.db.
    Summary,
    /// Index.db entries (keys, positions, promoted index headers).
    IndexEntry,
    /// Promoted index blocks (IndexInfo) of every entry, all access paths.
    PromotedIndex,
    /// Statistics.db (strict and lenient).
    Statistics,
    /// CompressionInfo.db.
    CompressionInfo,
    /// Data.db, uncompressed, with a fixed serialization header, through
    /// the scan reader and the validation checks.
    Data,
    /// Scylla.db.
    Scylla,
    /// Filter.db, and membership queries.
    Filter,
    /// Clustering prefixes, bounds and the clustering comparator.
    Clustering,
    /// Pre-3.0 (`ka`/`la`) cell-based Data.db, uncompressed, through the
    /// legacy decoder behind the scan reader, for the fixed tables of
    /// [`LEGACY_SCHEMAS`] (one per cell-name layout), and the validation
    /// checks (`jb` shares the `ka` Data.db format).
    LegacyData,
    /// BTI tries: Partitions.db (footer, every payload in order, exact
    /// lookups of the footer keys and of every stored prefix) and, through
    /// the payloads pointing into it, Rows.db (entries, row tries, floor
    /// searches, separator bounds); the input is [`split`] into the two
    /// files.
    Bti,
    /// The HyperLogLog++ cardinality estimator of Statistics.db, and its
    /// estimate.
    Hll,
    /// Value decoders and renderers (collections, tuples, UDTs, composites,
    /// vectors, counters and every native type), and value comparison.
    Value,
    /// CRC.db (and its per-chunk checks against the input) and `Digest.*`.
    Checksums,
    /// Data.db, uncompressed, with the serialization header of a
    /// Statistics.db: the input is [`split`] into Statistics.db (decoded
    /// leniently as `nb`, `oa`, `da`) and Data.db, scanned through the
    /// validation checks.
    DataHeader,
    /// Scrub's open path with a damaged Statistics.db: the input is
    /// [`split`] into Statistics.db and Data.db, written as an uncompressed
    /// `nb`, `oa` and `da` sstable without indexes in a scratch directory,
    /// then scrubbed (`skip`) into a salvage writer whose bloom filter is
    /// sized as the command sizes it.
    ScrubOpen,
}

impl Target {
    /// Every target.
    pub const ALL: [Target; 17] = [
        Target::Toc,
        Target::Summary,
        Target::IndexEntry,
        Target::PromotedIndex,
        Target::Statistics,
        Target::CompressionInfo,
        Target::Data,
        Target::Scylla,
        Target::Filter,
        Target::Clustering,
        Target::LegacyData,
        Target::Bti,
        Target::Hll,
        Target::Value,
        Target::Checksums,
        Target::DataHeader,
        Target::ScrubOpen,
    ];

    /// The target's name (the cargo-fuzz target and regression directory name).
    pub fn name(self) -> &'static str {
        match self {
            Target::Toc => "toc",
            Target::Summary => "summary",
            Target::IndexEntry => "index_entry",
            Target::PromotedIndex => "promoted_index",
            Target::Statistics => "statistics",
            Target::CompressionInfo => "compression_info",
            Target::Data => "data",
            Target::Scylla => "scylla",
            Target::Filter => "filter",
            Target::Clustering => "clustering",
            Target::LegacyData => "legacy_data",
            Target::Bti => "bti",
            Target::Hll => "hll",
            Target::Value => "value",
            Target::Checksums => "checksums",
            Target::DataHeader => "data_header",
            Target::ScrubOpen => "scrub_open",
        }
    }

    /// The target named `s`.
    pub fn parse(s: &str) -> Option<Target> {
        Self::ALL.into_iter().find(|t| t.name() == s)
    }
}

/// The features of the versions named (all known).
fn versions(vs: &'static [&'static str]) -> impl Iterator<Item = Features> {
    vs.iter()
        .filter_map(|v| Version::parse(v).ok().map(|v| v.features()))
}

fn ty(s: &str) -> CqlType {
    CqlType::parse(s).unwrap_or(CqlType::Custom(s.into()))
}

fn col(name: &str, t: &str) -> ColumnDef {
    ColumnDef {
        name: name.into(),
        name_bytes: name.as_bytes().to_vec(),
        ty: ty(t),
        type_string: t.into(),
    }
}

/// The fixed table of the `data` target: clustering (int, reversed text),
/// a static text, regular text, `set<int>` (complex) and int columns.
pub fn data_header() -> SerializationHeader {
    let ck = ["Int32Type", "ReversedType(UTF8Type)"];
    SerializationHeader {
        min_timestamp: crate::statistics::header::TIMESTAMP_EPOCH,
        min_local_deletion_time: crate::statistics::header::DELETION_TIME_EPOCH,
        min_ttl: 0,
        raw_deltas: (0, 0, 0),
        partition_key_type: ty("UTF8Type"),
        partition_key_type_string: "UTF8Type".into(),
        clustering_types: ck.iter().map(|t| ty(t)).collect(),
        clustering_type_strings: ck.iter().map(|t| t.to_string()).collect(),
        static_columns: vec![col("s", "UTF8Type")],
        regular_columns: vec![
            col("v1", "UTF8Type"),
            col("v2", "SetType(Int32Type)"),
            col("v3", "Int32Type"),
        ],
    }
}

/// The fixed tables of the `legacy_data` target, one per cell-name layout
/// ([`crate::data::legacy::Layout`]): CQL (compound: clustering int and
/// reversed text, a static, a set and simple columns), compact dense
/// compound (two clustering columns), compact dense (one) and static
/// compact (none).
pub const LEGACY_SCHEMAS: [&str; 4] = [
    "CREATE TABLE k.t (pk text, c1 int, c2 text, s text static, v1 text, v2 set<int>, \
     v3 int, PRIMARY KEY (pk, c1, c2)) WITH CLUSTERING ORDER BY (c1 ASC, c2 DESC)",
    "CREATE TABLE k.t (pk int, a int, b text, r int, PRIMARY KEY (pk, a, b)) WITH COMPACT STORAGE",
    "CREATE TABLE k.t (pk int, ck int, v counter, PRIMARY KEY (pk, ck)) WITH COMPACT STORAGE",
    "CREATE TABLE k.t (pk text PRIMARY KEY, v text, w int) WITH COMPACT STORAGE",
];

fn legacy_schemas() -> &'static [crate::schema::TableSchema] {
    static S: std::sync::OnceLock<Vec<crate::schema::TableSchema>> = std::sync::OnceLock::new();
    S.get_or_init(|| {
        LEGACY_SCHEMAS
            .iter()
            .filter_map(|c| crate::schema::TableSchema::from_cql(c).ok())
            .collect()
    })
}

/// Scan `r` to the end through the validation checks, for at most `max`
/// fragments (every fragment but a few per partition or atom consumes
/// input, so a bound derived from the input length only guards against a
/// reader that stops advancing).
fn check_scan(mut r: ScanReader<'_>, header: &SerializationHeader, max: usize, peek: bool) {
    let mut checker = DataChecker::new(header, Partitioner::Murmur3, None);
    let mut out = Problems::with_max(64);
    let mut n = 0usize;
    loop {
        n += 1;
        if n > max {
            break;
        }
        if peek {
            let _ = r.next_position();
        }
        match r.next_fragment() {
            Ok(Some(Fragment::PartitionStart {
                key,
                deletion,
                position,
                ..
            })) => {
                let k = key.to_vec();
                checker.partition_start(&k, &deletion, position.0, true, &mut out);
            }
            Ok(Some(Fragment::PartitionEnd { position })) => {
                checker.partition_end(position.0, &mut out)
            }
            Ok(Some(f)) => {
                checker.fragment(&f, &mut out);
            }
            Ok(None) | Err(_) => break,
        }
    }
}

/// The two files of a two-file target ([`Target::Bti`],
/// [`Target::Checksums`], [`Target::DataHeader`]): a big-endian `u32`
/// length `n`, `n` bytes of the first file (fewer when the input ends
/// first), then the second file. An input shorter than 4 bytes is all
/// second file.
pub fn split(bytes: &[u8]) -> (&[u8], &[u8]) {
    let Some((len, rest)) = bytes.split_first_chunk::<4>() else {
        return (&[], bytes);
    };
    let n = (u32::from_be_bytes(*len) as usize).min(rest.len());
    rest.split_at(n)
}

/// The [`Target::ScrubOpen`] run of one version: the sstable written to a
/// fresh scratch directory (removed afterwards), opened and scrubbed.
fn scrub_open(version: &str, format: &str, stats: &[u8], data: &[u8]) -> std::io::Result<()> {
    use crate::write::{bloom, copy::kept_metadata, salvage::SalvageWriter, WriterOptions};
    static RUN: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = RUN.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir =
        std::env::temp_dir().join(format!("sstkit-fuzz-scrub-open-{}-{n}", std::process::id()));
    std::fs::create_dir_all(dir.join("out"))?;
    let prefix = dir.join(format!("{version}-1-{format}-"));
    let file = |c: &str| std::path::PathBuf::from(format!("{}{c}", prefix.display()));
    std::fs::write(file("Statistics.db"), stats)?;
    std::fs::write(file("Data.db"), data)?;
    std::fs::write(file("TOC.txt"), "Data.db\nStatistics.db\nTOC.txt\n")?;
    let run = || -> crate::Result<()> {
        let sst = crate::Sstable::open_path(&file("Data.db"))?;
        let st =
            Statistics::parse_lenient(&sst.read_component(Component::Statistics)?, sst.features())?;
        let header = sst.data_header(&st)?;
        let mut opts = WriterOptions::new(sst.version());
        if let Some(v) = &st.validation {
            opts.bloom_filter_fp_chance = v.bloom_filter_fp_chance;
        }
        let mut sink = SalvageWriter::new(
            &dir.join("out"),
            &header,
            kept_metadata(&st),
            opts,
            sst.partitioner(&st)?,
            false,
            bloom::expected_keys(&sst, &st),
        )?;
        let scrub_opts = crate::scrub::Options {
            mode: crate::scrub::Mode::Skip,
            keep_out_of_order: true,
            ..crate::scrub::Options::default()
        };
        crate::scrub::scrub(&sst, &scrub_opts, Some(&mut sink), &mut |_, _| {})?;
        Ok(())
    };
    let _ = run();
    std::fs::remove_dir_all(&dir)
}

/// The input [`split`] turns back into `first` and `second` (seeds, tests).
pub fn join(first: &[u8], second: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(4 + first.len() + second.len());
    v.extend_from_slice(&(first.len() as u32).to_be_bytes());
    v.extend_from_slice(first);
    v.extend_from_slice(second);
    v
}

/// Most partition payloads of a [`Target::Bti`] input looked up again, and
/// most Rows.db entries (and row-trie entries of each) walked: enough to
/// reach every decoder, few enough that a hostile trie sharing its subtrees
/// does not make a run quadratic in the input.
const BTI_MAX_LOOKUPS: usize = 256;
const BTI_MAX_ROW_TRIES: usize = 64;

/// [`Target::Bti`]: what `dump-trie --rows` and `BtiIndex` lookups read,
/// from in-memory files.
fn bti(part: &[u8], rows: &[u8]) {
    use crate::bti::comparable::{hash_byte, partition_key_bytes, separator_bounds};
    use crate::bti::partitions::{exact_candidate, for_each_entry};
    use crate::bti::rows::{row_trie_entries, row_trie_floor};
    use crate::bti::{Flavor, PartitionPosition, PartitionsFooter, RowsEntry, SliceSource};

    let Ok(footer) = PartitionsFooter::decode(part, part.len() as u64) else {
        return;
    };
    let mut src = SliceSource::new(part, Component::Partitions);
    for key in [&footer.first_key, &footer.last_key] {
        if let Some(bc) = partition_key_bytes(&Partitioner::Murmur3, key) {
            let _ = exact_candidate(&mut src, footer.root, &bc, hash_byte(key), true);
        }
    }
    let mut found = Vec::new();
    let mut rows_at = Vec::new();
    let _ = for_each_entry(&mut src, footer.root, &mut |e| {
        if found.len() < BTI_MAX_LOOKUPS {
            found.push((e.prefix, e.payload.hash.unwrap_or(0)));
        }
        if let PartitionPosition::Rows(off) = e.payload.position {
            if rows_at.len() < BTI_MAX_ROW_TRIES {
                rows_at.push(off);
            }
        }
        Ok(true)
    });
    for (prefix, hash) in &found {
        let _ = exact_candidate(&mut src, footer.root, prefix, *hash, true);
    }
    rows_at.sort_unstable();
    rows_at.dedup();
    let types = [ty("Int32Type"), ty("ReversedType(UTF8Type)")];
    let mut rsrc = SliceSource::new(rows, Component::Rows);
    for flavor in [Flavor::Cassandra, Flavor::Scylla] {
        for &off in &rows_at {
            let Ok(e) = RowsEntry::read(&mut rsrc, off, flavor) else {
                continue;
            };
            let Ok(t) = row_trie_entries(&mut rsrc, e.root, flavor) else {
                continue;
            };
            for x in t.iter().take(BTI_MAX_LOOKUPS) {
                let _ = separator_bounds(&types, &x.separator);
                let _ = row_trie_floor(&mut rsrc, e.root, &x.separator, flavor);
            }
        }
    }
}

/// The types of [`Target::Value`]: every native type, and nested
/// collections, tuples, UDTs, vectors and composites.
pub const VALUE_TYPES: [&str; 16] = [
    "AsciiType",
    "UTF8Type",
    "DecimalType",
    "IntegerType",
    "InetAddressType",
    "DurationType",
    "TimeUUIDType",
    "CounterColumnType",
    "FrozenType(ListType(Int32Type))",
    "FrozenType(SetType(ReversedType(UTF8Type)))",
    "FrozenType(MapType(UTF8Type,FrozenType(ListType(TimestampType))))",
    "TupleType(Int32Type,UTF8Type,DecimalType,BooleanType)",
    "UserType(ks,61646472657373,737472656574:UTF8Type,7a6970:Int32Type,74616773:FrozenType(SetType(UTF8Type)))",
    "VectorType(FloatType,3)",
    "VectorType(UTF8Type,2)",
    "CompositeType(Int32Type,UTF8Type,SimpleDateType,TimeType,DoubleType)",
];

fn value_types() -> &'static [CqlType] {
    static T: std::sync::OnceLock<Vec<CqlType>> = std::sync::OnceLock::new();
    T.get_or_init(|| VALUE_TYPES.iter().map(|t| ty(t)).collect())
}

/// [`Target::Value`]: decode the input as a value of every type, walk the
/// decoded tree and the borrowed view of the bytes (what the renderer
/// walks) to the leaves, compare its halves.
fn values(bytes: &[u8]) {
    use crate::value::view::{Item, View};
    use crate::value::{decode, Value};
    fn children<C>(v: View<'_, C>) -> Vec<C> {
        match v {
            View::List(c) | View::Set(c) | View::Map(c) | View::Vector(c) => c,
            View::Tuple { fields, .. } => fields,
            View::Udt { fields, .. } => fields.into_iter().map(|f| f.1).collect(),
            View::Composite(parts) => parts.into_iter().map(|p| p.0).collect(),
            _ => Vec::new(),
        }
    }
    fn walk_value(v: &Value) {
        children(v.view()).into_iter().for_each(walk_value);
    }
    fn walk_item(i: Item<'_>) {
        children(i.view()).into_iter().for_each(walk_item);
    }
    let (a, b) = bytes.split_at(bytes.len() / 2);
    for t in value_types() {
        if let Ok(v) = decode(t, bytes) {
            walk_value(&v);
        }
        walk_item(Item::new(t, bytes));
        let _ = crate::compare::compare_value(t, a, b);
    }
    let _ = crate::value::decode_counter(&mut Cur::new(bytes, Component::Data, 0));
}

/// Run `target` on `bytes`.
pub fn run(target: Target, bytes: &[u8]) {
    match target {
        Target::Toc => {
            let _ = Toc::parse(bytes);
        }
        Target::Summary => {
            for f in versions(&["jb", "nb"]) {
                if let Ok(s) = Summary::parse(bytes, &f) {
                    let _ = s.floor(|k| k.cmp(bytes.get(..4).unwrap_or(&[])));
                    for i in 0..=s.len() {
                        let _ = s.index_range(i);
                    }
                    let _ = (s.header.level(), s.header.effective_interval());
                }
            }
        }
        Target::IndexEntry => {
            for f in versions(&["ka", "mc", "nb", "oa"]) {
                let mut r = IndexReader::new(bytes, f);
                let mut n = 0usize;
                while let Ok(Some(_)) = r.next() {
                    n += 1;
                    if n > bytes.len() {
                        break;
                    }
                }
            }
        }
        Target::PromotedIndex => {
            let fixed = [Some(4), None, Some(16)];
            for f in versions(&["ka", "mc", "oa"]) {
                let mut r = IndexReader::new(bytes, f);
                while let Ok(Some(e)) = r.next() {
                    if let Some(pi) = &e.promoted {
                        let _ = pi.blocks(&fixed);
                        for i in [0, pi.block_count / 2, pi.block_count.saturating_sub(1)] {
                            let _ = pi.block(i, &fixed);
                        }
                        let _ = pi.floor_block(&fixed, |n| {
                            n.as_prefix()
                                .map_or(std::cmp::Ordering::Less, |p| p.values.len().cmp(&1))
                        });
                    }
                }
            }
        }
        Target::Statistics => {
            for f in versions(&["jb", "la", "mc", "nb", "oa"]) {
                let _ = Statistics::parse(bytes, f);
                if let Ok(st) = Statistics::parse_lenient(bytes, f) {
                    let _ = st.compaction.as_ref().map(|c| c.cardinality());
                    if let Some(s) = &st.stats {
                        for h in [&s.estimated_partition_size, &s.estimated_cells_count] {
                            let _ = (h.buckets(), h.overflow());
                        }
                    }
                    if let Some(h) = &st.header {
                        let _ = h.clustering_fixed_lens();
                        let _ = SerializationHeader::data_order(&h.regular_columns);
                    }
                }
            }
        }
        Target::CompressionInfo => {
            for f in versions(&["la", "mc", "nb"]) {
                if let Ok(ci) = CompressionInfo::parse(bytes, &f) {
                    let n = ci.chunk_count();
                    for i in 0..=n {
                        let _ = ci.chunk_range(i, bytes.len() as u64 * 4);
                        let _ = ci.uncompressed_len(i);
                    }
                    let _ = ci.chunk_for(ci.data_length / 2);
                    let _ = ci.check_file_len(bytes.len() as u64);
                }
            }
        }
        Target::Data => {
            let header = data_header();
            for f in versions(&["nb", "oa"]) {
                let opts = ReaderOptions {
                    block_size: 97,
                    ..ReaderOptions::default()
                };
                let r = ScanReader::from_bytes(bytes, &header, f, opts);
                check_scan(r, &header, bytes.len() + 2, false);
                // Skipping by size fields, from the start.
                let mut r = ScanReader::from_bytes(bytes, &header, f, opts);
                let mut n = 0usize;
                while let Ok(true) = r.skip_partition() {
                    n += 1;
                    if n > bytes.len() {
                        break;
                    }
                }
            }
        }
        Target::LegacyData => {
            for (i, schema) in legacy_schemas().iter().enumerate() {
                let header = crate::data::legacy::legacy_header(schema);
                let f = Version::parse(if i % 2 == 0 { "ka" } else { "la" }).map(|v| v.features());
                let Ok(f) = f else { continue };
                let opts = ReaderOptions {
                    block_size: 97,
                    ..ReaderOptions::default()
                };
                let r = ScanReader::legacy_from_bytes(bytes, schema, f, opts);
                check_scan(r, &header, 4 * bytes.len() + 4, i == 0);
                // Skipping partitions (decoded to their ends).
                let mut r = ScanReader::legacy_from_bytes(bytes, schema, f, opts);
                let mut n = 0usize;
                while let Ok(true) = r.skip_partition() {
                    n += 1;
                    if n > bytes.len() {
                        break;
                    }
                }
            }
        }
        Target::Scylla => {
            if let Ok(m) = crate::scylla::ScyllaMetadata::parse_lenient(bytes) {
                let _ = m.check_digest();
                for r in m.sharding().unwrap_or(&[]) {
                    let _ = r.contains_murmur3(0);
                }
                if let Some(s) = m.schema() {
                    for c in &s.columns {
                        let _ = (c.kind_name(), CqlType::parse(&c.type_name));
                    }
                }
                let _ = (m.features().names(), m.scylla_version());
                let _ = m.components_digest(crate::scylla::COMPONENT_TYPE_SCYLLA);
            }
            let _ = crate::scylla::ScyllaMetadata::parse(bytes);
        }
        Target::Filter => {
            for fe in versions(&["ka", "mc", "nb"]) {
                if let Ok(f) = BloomFilter::parse(bytes, &fe) {
                    for k in [&b""[..], b"k", bytes.get(..8).unwrap_or(b"x")] {
                        let _ = f.may_contain(k);
                    }
                    let _ = f.estimated_keys();
                }
            }
        }
        Target::Bti => {
            let (part, rows) = split(bytes);
            bti(part, rows);
        }
        Target::Hll => {
            let mut cur = Cur::new(bytes, Component::Statistics, 0);
            if let Ok(h) = crate::statistics::HyperLogLogPlus::parse(&mut cur) {
                let _ = h.cardinality();
            }
        }
        Target::Value => values(bytes),
        Target::Checksums => {
            use crate::crc::CrcFile;
            use crate::digest::{ChecksumAlgo, Digest};
            let (first, data) = split(bytes);
            if let Ok(c) = CrcFile::parse(first) {
                for algo in [ChecksumAlgo::Crc32, ChecksumAlgo::Adler32] {
                    let _ = c.mismatches(data, algo);
                    let _ = c.chunk_range(c.checksums.len(), data.len() as u64);
                }
            }
            for name in ["Digest.crc32", "Digest.adler32", "Digest.sha1"] {
                if let Ok(d) = Digest::parse(first, name) {
                    let _ = d.verify(data);
                    let _ = d.verify_compressed(data, &[0, data.len() as u64 / 2]);
                }
            }
        }
        Target::DataHeader => {
            let (stats, data) = split(bytes);
            for f in versions(&["nb", "oa", "da"]) {
                let Ok(st) = Statistics::parse_lenient(stats, f) else {
                    continue;
                };
                let Some(header) = st.header else { continue };
                let opts = ReaderOptions {
                    block_size: 97,
                    ..ReaderOptions::default()
                };
                let r = ScanReader::from_bytes(data, &header, f, opts);
                check_scan(r, &header, data.len() + 2, true);
            }
        }
        Target::ScrubOpen => {
            let (stats, data) = split(bytes);
            for (version, format) in [("nb", "big"), ("oa", "big"), ("da", "bti")] {
                // A scratch directory that cannot be written leaves nothing to test.
                let _ = scrub_open(version, format, stats, data);
            }
        }
        Target::Clustering => {
            let types: Vec<CqlType> = [
                "Int32Type",
                "ReversedType(UTF8Type)",
                "DecimalType",
                "TimeUUIDType",
                "FrozenType(ListType(Int32Type))",
            ]
            .iter()
            .map(|t| ty(t))
            .collect();
            let fixed: Vec<Option<usize>> = types.iter().map(|t| t.fixed_len()).collect();
            let cmp = crate::compare::ClusteringComparator::new(types);
            let half = bytes.len() / 2;
            let (a, b) = bytes.split_at(half);
            let pa = decode_prefix(&mut Cur::new(a, Component::Index, 0), &fixed);
            let pb = decode_bound(&mut Cur::new(b, Component::Data, 0), &fixed)
                .or_else(|_| decode_clustering(&mut Cur::new(b, Component::Data, 0), &fixed));
            if let (Ok(x), Ok(y)) = (pa, pb) {
                let _ = cmp.compare(&x, &y);
                let _ = cmp.compare(&y, &x);
            }
            for t in cmp.types() {
                let _ = crate::compare::compare_value(t, a, b);
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A small seeded PRNG (xorshift64*).
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
        }
    }

    fn fixture(dir: &str, suffix: &str) -> Option<Vec<u8>> {
        let d = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../fixtures/cassandra")
            .join(dir);
        let f = std::fs::read_dir(d)
            .ok()?
            .flatten()
            .find(|e| e.file_name().to_string_lossy().ends_with(suffix))?;
        std::fs::read(f.path()).ok()
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, .. ProptestConfig::default() })]
        #[test]
        fn arbitrary_bytes_never_panic(t in 0..Target::ALL.len(),
                                       bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
            run(Target::ALL[t], &bytes);
        }
    }

    #[test]
    fn split_inverts_join() {
        assert_eq!(split(&join(b"ab", b"cde")), (&b"ab"[..], &b"cde"[..]));
        assert_eq!(split(&[0, 0, 0, 9, 1, 2]), (&[1u8, 2][..], &[][..]));
        assert_eq!(split(&[0, 0, 1]), (&[][..], &[0u8, 0, 1][..]));
    }

    /// A seed of the `bti` target made from a real sstable reaches every
    /// partition and, through them, the row tries of Rows.db.
    #[test]
    fn bti_seed_reaches_row_tries() {
        use crate::bti::partitions::for_each_entry;
        use crate::bti::rows::row_trie_entries;
        use crate::bti::{Flavor, PartitionPosition, PartitionsFooter, RowsEntry, SliceSource};
        let seed = join(
            &fixture("da_wide", "Partitions.db").unwrap(),
            &fixture("da_wide", "Rows.db").unwrap(),
        );
        let (part, rows) = split(&seed);
        let footer = PartitionsFooter::decode(part, part.len() as u64).unwrap();
        let mut entries = Vec::new();
        let mut src = SliceSource::new(part, Component::Partitions);
        for_each_entry(&mut src, footer.root, &mut |e| {
            entries.push(e);
            Ok(true)
        })
        .unwrap();
        assert_eq!(entries.len() as u64, footer.key_count);
        let mut rsrc = SliceSource::new(rows, Component::Rows);
        let mut tries = 0;
        for e in &entries {
            if let PartitionPosition::Rows(off) = e.payload.position {
                let r = RowsEntry::read(&mut rsrc, off, Flavor::Cassandra).unwrap();
                let t = row_trie_entries(&mut rsrc, r.root, Flavor::Cassandra).unwrap();
                assert!(t.len() >= 2, "a row trie has its blocks and an end entry");
                tries += 1;
            }
        }
        assert!(tries > 0, "da_wide has row indexes");
        run(Target::Bti, &seed);
    }

    #[test]
    fn value_types_parse() {
        for t in VALUE_TYPES {
            assert!(CqlType::parse(t).is_ok(), "{t}");
        }
    }

    #[test]
    fn legacy_schemas_parse() {
        assert_eq!(legacy_schemas().len(), LEGACY_SCHEMAS.len());
    }

    /// Mutations (flips, truncations, splices of length fields) of real
    /// components, for every target, seeded.
    #[test]
    fn mutated_real_components_never_panic() {
        let mut inputs: Vec<(Target, Vec<u8>)> = [
            (Target::Toc, "nb_clustering", "TOC.txt"),
            (Target::Summary, "nb_clustering", "Summary.db"),
            (Target::IndexEntry, "nb_wide", "Index.db"),
            (Target::PromotedIndex, "nb_wide", "Index.db"),
            (Target::Statistics, "nb_clustering", "Statistics.db"),
            (
                Target::CompressionInfo,
                "nb_clustering",
                "CompressionInfo.db",
            ),
            (Target::Filter, "nb_clustering", "Filter.db"),
            (Target::Data, "nb_clustering_nocompress", "Data.db"),
        ]
        .iter()
        .filter_map(|(t, d, s)| fixture(d, s).map(|b| (*t, b)))
        .collect();
        assert_eq!(inputs.len(), 8, "fixtures missing");
        let pairs = [
            (Target::Bti, "da_wide", "Partitions.db", "Rows.db"),
            (
                Target::DataHeader,
                "nb_clustering_nocompress",
                "Statistics.db",
                "Data.db",
            ),
            (
                Target::Checksums,
                "nb_clustering_nocompress",
                "CRC.db",
                "Data.db",
            ),
        ];
        for (t, d, a, b) in pairs {
            let (a, b) = (fixture(d, a).unwrap(), fixture(d, b).unwrap());
            inputs.push((t, join(&a, &b)));
        }
        let mut rng = Rng(0x00f0_22ed);
        for (t, orig) in &inputs {
            // Big inputs get fewer rounds (the data target decodes everything).
            let rounds = if orig.len() > 100_000 { 12 } else { 150 };
            for _ in 0..rounds {
                let mut b = orig.clone();
                match rng.next() % 4 {
                    0 => {
                        for _ in 0..1 + rng.next() % 8 {
                            let i = (rng.next() % b.len().max(1) as u64) as usize;
                            if let Some(x) = b.get_mut(i) {
                                *x ^= 1 << (rng.next() % 8);
                            }
                        }
                    }
                    1 => {
                        let n = (rng.next() % (b.len() as u64 + 1)) as usize;
                        b.truncate(n);
                    }
                    2 => {
                        let i = (rng.next() % b.len().max(1) as u64) as usize;
                        for (j, x) in [0xffu8, 0xff, 0xff, 0x7f].iter().enumerate() {
                            if let Some(y) = b.get_mut(i + j) {
                                *y = *x;
                            }
                        }
                    }
                    _ => {
                        let i = (rng.next() % b.len().max(1) as u64) as usize;
                        let n = (rng.next() % 64) as usize;
                        let end = (i + n).min(b.len());
                        if i < end {
                            b[i..end].fill(0);
                        }
                    }
                }
                run(*t, &b);
            }
        }
    }
}
