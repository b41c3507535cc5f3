//! CompressionInfo.db: the compressor and chunk table of a compressed Data.db.
//!
//! `shared/docs/sstable-format.md` §7.1; C\* `o.a.c/io/compress/CompressionMetadata.java`
//! (`open`, `Writer`, `chunkFor`), `o.a.c/schema/CompressionParams.java`;
//! Scylla `sstables/compress.cc`, `sstables/compressor.cc`.
//!
//! | field | type | notes |
//! |---|---|---|
//! | compressor | UTF | `LZ4Compressor`; Scylla writes `org.apache.cassandra.io.compress.LZ4Compressor` |
//! | option_count | i32 | |
//! | options | (key UTF, value UTF) × count | values may be binary (Scylla dictionaries) |
//! | chunk_length | i32 | uncompressed bytes per chunk, a power of two |
//! | max_compressed_length | i32 | `na`+ only (`features.max_compressed_length`); `i32::MAX` = never raw |
//! | data_length | i64 | uncompressed length of Data.db |
//! | chunk_count | i32 | |
//! | chunk_offsets | i64 × chunk_count | file offset of each chunk in Data.db |
//!
//! Chunk `i` occupies `[offset_i, offset_{i+1})` of Data.db (the last one runs
//! to the end of the file): a payload then a 4-byte big-endian checksum
//! (§7.2, see [`crate::chunk`]). Its uncompressed length is
//! `min(chunk_length, data_length − i × chunk_length)`.

use std::ops::Range;

use crate::component::Component;
use crate::cur::Cur;
use crate::error::{Error, ErrorKind, Result};
use crate::version::Features;

/// Package prefix Scylla writes before compressor class names (§7.1).
pub const CASSANDRA_COMPRESS_PACKAGE: &str = "org.apache.cassandra.io.compress.";

/// The compression algorithm named in CompressionInfo.db.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Compressor {
    /// `LZ4Compressor`: 4-byte LE length + LZ4 block.
    Lz4,
    /// `SnappyCompressor`: raw Snappy block.
    Snappy,
    /// `DeflateCompressor`: zlib stream.
    Deflate,
    /// `ZstdCompressor`: a zstd frame.
    Zstd,
    /// `NoopCompressor`: the bytes as they are.
    Noop,
    /// Scylla `LZ4WithDictsCompressor` (shared dictionary in the options).
    Lz4WithDicts,
    /// Scylla `ZstdWithDictsCompressor` (shared dictionary in the options).
    ZstdWithDicts,
    /// Anything else (a custom class), by its simple name.
    Other(String),
}

impl Compressor {
    /// Recognise a class name, simple or fully qualified.
    pub fn from_class(name: &str) -> Compressor {
        match simple_class_name(name) {
            "LZ4Compressor" => Compressor::Lz4,
            "SnappyCompressor" => Compressor::Snappy,
            "DeflateCompressor" => Compressor::Deflate,
            "ZstdCompressor" => Compressor::Zstd,
            "NoopCompressor" => Compressor::Noop,
            "LZ4WithDictsCompressor" => Compressor::Lz4WithDicts,
            "ZstdWithDictsCompressor" => Compressor::ZstdWithDicts,
            other => Compressor::Other(other.to_string()),
        }
    }

    /// The simple class name.
    pub fn name(&self) -> &str {
        match self {
            Compressor::Lz4 => "LZ4Compressor",
            Compressor::Snappy => "SnappyCompressor",
            Compressor::Deflate => "DeflateCompressor",
            Compressor::Zstd => "ZstdCompressor",
            Compressor::Noop => "NoopCompressor",
            Compressor::Lz4WithDicts => "LZ4WithDictsCompressor",
            Compressor::ZstdWithDicts => "ZstdWithDictsCompressor",
            Compressor::Other(s) => s,
        }
    }
}

/// `org.apache.cassandra.io.compress.X` → `X`; other names unchanged.
pub fn simple_class_name(name: &str) -> &str {
    name.strip_prefix(CASSANDRA_COMPRESS_PACKAGE)
        .unwrap_or(name)
}

/// One compression option; the value is kept as bytes (Scylla stores binary
/// dictionary pieces in options).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompressionOption {
    /// Option name.
    pub key: String,
    /// Raw value bytes.
    pub value: Vec<u8>,
}

/// A decoded CompressionInfo.db.
#[derive(Debug, Clone)]
pub struct CompressionInfo {
    /// The class name as written.
    pub compressor_class: String,
    /// The algorithm.
    pub compressor: Compressor,
    /// Options in file order.
    pub options: Vec<CompressionOption>,
    /// Uncompressed bytes per chunk.
    pub chunk_length: u32,
    /// `na`+: a stored payload this long or longer is an uncompressed chunk.
    pub max_compressed_length: Option<u32>,
    /// Uncompressed length of Data.db.
    pub data_length: u64,
    /// File offset of each chunk in Data.db.
    pub chunk_offsets: Vec<u64>,
    /// Where the last chunk ends in Data.db, when not at the end of the
    /// file: a table rebuilt by walking Data.db ([`crate::chunk_walk`])
    /// whose chain of chunks stops at damage or a cut. Never read from
    /// CompressionInfo.db.
    pub chunks_end: Option<u64>,
}

impl CompressionInfo {
    /// Decode a whole CompressionInfo.db.
    pub fn parse(bytes: &[u8], features: &Features) -> Result<CompressionInfo> {
        let mut cur = Cur::new(bytes, Component::CompressionInfo, 0);
        let compressor_class = cur.utf("compressor class")?;
        let compressor = Compressor::from_class(&compressor_class);
        let n = non_negative(&mut cur, "compression option count")?;
        // Each option is two u16-prefixed strings: at least 4 bytes.
        let n = cur.count(n as u64, 4, "compression option count")?;
        let mut options = Vec::with_capacity(n);
        for _ in 0..n {
            let key = cur.utf("compression option key")?;
            let value = cur.short_bytes("compression option value")?.to_vec();
            options.push(CompressionOption { key, value });
        }
        let at = cur.clone();
        let chunk_length = non_negative(&mut cur, "chunk length")?;
        if chunk_length == 0 || !chunk_length.is_power_of_two() {
            return Err(at.bad(
                "chunk length",
                format!("chunk length {chunk_length} is not a power of two"),
            ));
        }
        let max_compressed_length = if features.max_compressed_length {
            Some(non_negative(&mut cur, "max compressed length")?)
        } else {
            None
        };
        let at = cur.clone();
        let data_length = cur.i64("data length")?;
        let data_length = u64::try_from(data_length)
            .map_err(|_| at.bad("data length", format!("negative data length {data_length}")))?;
        let at = cur.clone();
        let count = non_negative(&mut cur, "chunk count")?;
        let count = cur.count(count as u64, 8, "chunk count")?;
        let expected = data_length.div_ceil(chunk_length as u64);
        // NOTE: some real writers (C* 3.0.x `mb`, several `mc`/`md` files in
        // scylladb/{counter_test,large_partition,summary_test}) end with one
        // extra, empty chunk (LZ4: a 5-byte payload for 0 bytes + checksum),
        // which §7.1 does not mention. Accept exactly one such chunk.
        if count as u64 != expected && count as u64 != expected + 1 {
            return Err(at.bad(
                "chunk count",
                format!(
                    "{count} chunks but data length {data_length} needs {expected} of {chunk_length} bytes"
                ),
            ));
        }
        let mut chunk_offsets = Vec::with_capacity(count);
        for i in 0..count {
            let at = cur.clone();
            let off = cur.i64("chunk offset")?;
            let off = u64::try_from(off)
                .map_err(|_| at.bad("chunk offset", format!("negative offset {off}")))?;
            // Every chunk holds at least its 4-byte checksum.
            if let Some(&prev) = chunk_offsets.last() {
                if off < prev + 4 {
                    return Err(at.bad(
                        "chunk offset",
                        format!("chunk {i} at {off} overlaps chunk {} at {prev}", i - 1),
                    ));
                }
            }
            chunk_offsets.push(off);
        }
        if !cur.is_empty() {
            return Err(cur.bad(
                "chunk offsets",
                format!("{} bytes after the chunk offsets", cur.remaining()),
            ));
        }
        Ok(CompressionInfo {
            compressor_class,
            compressor,
            options,
            chunk_length,
            max_compressed_length,
            data_length,
            chunk_offsets,
            chunks_end: None,
        })
    }

    /// The value of option `key`, as text (lossy UTF-8).
    pub fn option(&self, key: &str) -> Option<String> {
        self.options
            .iter()
            .find(|o| o.key == key)
            .map(|o| String::from_utf8_lossy(&o.value).into_owned())
    }

    /// The Scylla shared dictionary: options `.dictionary.00000000`,
    /// `.dictionary.00000001`, … concatenated in numeric order (§7.3).
    pub fn dictionary(&self) -> Option<Vec<u8>> {
        let mut pieces: Vec<(u64, &[u8])> = self
            .options
            .iter()
            .filter_map(|o| {
                let n = o.key.strip_prefix(".dictionary.")?.parse().ok()?;
                Some((n, o.value.as_slice()))
            })
            .collect();
        if pieces.is_empty() {
            return None;
        }
        pieces.sort_by_key(|p| p.0);
        Some(
            pieces
                .into_iter()
                .flat_map(|p| p.1.iter().copied())
                .collect(),
        )
    }

    /// Number of chunks.
    pub fn chunk_count(&self) -> usize {
        self.chunk_offsets.len()
    }

    /// A chunk index the caller asked for is out of range (a caller error,
    /// not a file error: no offset).
    fn out_of_range(&self, i: usize) -> Error {
        Error::new(
            ErrorKind::BadValue(format!(
                "chunk {i} out of range ({} chunks)",
                self.chunk_count()
            )),
            "chunk index",
        )
        .in_component(Component::CompressionInfo)
    }

    /// Byte range of chunk `i` in Data.db (payload and checksum), given the
    /// Data.db file length.
    pub fn chunk_range(&self, i: usize, data_file_len: u64) -> Result<Range<u64>> {
        let start = *self
            .chunk_offsets
            .get(i)
            .ok_or_else(|| self.out_of_range(i))?;
        let end = self.chunk_offsets.get(i + 1).copied().unwrap_or(
            self.chunks_end
                .map_or(data_file_len, |e| e.min(data_file_len)),
        );
        if end > data_file_len || end < start.saturating_add(4) {
            return Err(Error::at(
                ErrorKind::BadValue(format!(
                    "chunk {i} spans {start}..{end}, not within the {data_file_len}-byte Data.db \
                     with room for its checksum"
                )),
                Component::Data,
                start.min(data_file_len),
                "compressed chunk",
            ));
        }
        Ok(start..end)
    }

    /// Uncompressed start of chunk `i`.
    pub fn chunk_start(&self, i: usize) -> u64 {
        i as u64 * self.chunk_length as u64
    }

    /// Uncompressed length of chunk `i` (0 for a trailing empty chunk).
    pub fn uncompressed_len(&self, i: usize) -> Result<usize> {
        if i >= self.chunk_count() {
            return Err(self.out_of_range(i));
        }
        let rest = self.data_length.saturating_sub(self.chunk_start(i));
        Ok(rest.min(self.chunk_length as u64) as usize)
    }

    /// The chunk holding uncompressed position `pos` (`None` at or past the end).
    pub fn chunk_for(&self, pos: u64) -> Option<usize> {
        if pos >= self.data_length {
            return None;
        }
        usize::try_from(pos / self.chunk_length as u64).ok()
    }

    /// Check the table against the Data.db file length: the last chunk must
    /// start at least 4 bytes before the end (and no chunks means an empty file).
    pub fn check_file_len(&self, data_file_len: u64) -> Result<()> {
        match self.chunk_offsets.last() {
            Some(&last) if last.saturating_add(4) > data_file_len => Err(Error::at(
                ErrorKind::BadValue(format!(
                    "last chunk starts at {last} but Data.db has only {data_file_len} bytes"
                )),
                Component::Data,
                data_file_len,
                "compressed chunk",
            )),
            None if data_file_len != 0 => Err(Error::at(
                ErrorKind::BadValue(format!("no chunks but Data.db has {data_file_len} bytes")),
                Component::Data,
                0,
                "compressed chunk",
            )),
            _ => Ok(()),
        }
    }
}

fn non_negative(cur: &mut Cur<'_>, what: &'static str) -> Result<u32> {
    let at = cur.clone();
    let v = cur.i32(what)?;
    u32::try_from(v).map_err(|_| at.bad(what, format!("negative value {v}")))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::test_support as corpus;
    use crate::version::Version;
    use proptest::prelude::*;

    fn feats(v: &str) -> Features {
        Version::parse(v).unwrap().features()
    }

    /// §7.1 worked example (`nb` simple).
    const NB: &[u8] = &[
        0x00, 0x0d, b'L', b'Z', b'4', b'C', b'o', b'm', b'p', b'r', b'e', b's', b's', b'o', b'r',
        0, 0, 0, 0, 0, 0, 0x40, 0, 0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0xad, 0, 0, 0, 1,
        0, 0, 0, 0, 0, 0, 0, 0,
    ];

    pub(crate) fn build(
        class: &str,
        opts: &[(&str, &[u8])],
        chunk: u32,
        mcl: Option<u32>,
        len: u64,
        offs: &[u64],
    ) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend_from_slice(&(class.len() as u16).to_be_bytes());
        b.extend_from_slice(class.as_bytes());
        b.extend_from_slice(&(opts.len() as i32).to_be_bytes());
        for (k, v) in opts {
            b.extend_from_slice(&(k.len() as u16).to_be_bytes());
            b.extend_from_slice(k.as_bytes());
            b.extend_from_slice(&(v.len() as u16).to_be_bytes());
            b.extend_from_slice(v);
        }
        b.extend_from_slice(&chunk.to_be_bytes());
        if let Some(m) = mcl {
            b.extend_from_slice(&m.to_be_bytes());
        }
        b.extend_from_slice(&len.to_be_bytes());
        b.extend_from_slice(&(offs.len() as i32).to_be_bytes());
        for o in offs {
            b.extend_from_slice(&o.to_be_bytes());
        }
        b
    }

    #[test]
    fn doc_example() {
        let c = CompressionInfo::parse(NB, &feats("nb")).unwrap();
        assert_eq!(c.compressor, Compressor::Lz4);
        assert_eq!(c.chunk_length, 16384);
        assert_eq!(c.max_compressed_length, Some(i32::MAX as u32));
        assert_eq!(c.data_length, 0xad);
        assert_eq!(c.chunk_offsets, vec![0]);
        assert_eq!(c.uncompressed_len(0).unwrap(), 0xad);
        assert_eq!(c.chunk_range(0, 200).unwrap(), 0..200);
        assert!(c.chunk_range(1, 200).is_err());
        assert!(c.chunk_range(0, 3).is_err());
        assert_eq!(c.chunk_for(0xac), Some(0));
        assert_eq!(c.chunk_for(0xad), None);
        // Read as a pre-na version the same bytes are malformed.
        assert!(CompressionInfo::parse(NB, &feats("mc")).is_err());
    }

    #[test]
    fn scylla_names_options_and_geometry() {
        let b = build(
            "org.apache.cassandra.io.compress.ZstdWithDictsCompressor",
            &[
                (".dictionary.00000001", b"\x00\xffB"),
                ("compression_level", b"3"),
                (".dictionary.00000000", b"A\x80"),
            ],
            4096,
            None,
            10000,
            &[0, 100, 250],
        );
        let c = CompressionInfo::parse(&b, &feats("me")).unwrap();
        assert_eq!(c.compressor, Compressor::ZstdWithDicts);
        assert_eq!(c.compressor.name(), "ZstdWithDictsCompressor");
        assert_eq!(c.option("compression_level").as_deref(), Some("3"));
        assert_eq!(c.dictionary().unwrap(), b"A\x80\x00\xffB");
        assert_eq!(c.chunk_count(), 3);
        assert_eq!(c.uncompressed_len(2).unwrap(), 10000 - 8192);
        assert_eq!(c.chunk_start(2), 8192);
        assert_eq!(c.chunk_for(8191), Some(1));
        assert_eq!(c.chunk_range(1, 300).unwrap(), 100..250);
        assert_eq!(c.chunk_range(2, 300).unwrap(), 250..300);
        assert!(c.check_file_len(300).is_ok());
        assert!(c.check_file_len(252).is_err());
        assert_eq!(Compressor::from_class("LZ4Compressor"), Compressor::Lz4);
        assert_eq!(
            Compressor::from_class("com.x.Mine"),
            Compressor::Other("com.x.Mine".into())
        );
    }

    #[test]
    fn rejects_inconsistent_tables() {
        // Wrong chunk count for the data length.
        let b = build("LZ4Compressor", &[], 4096, None, 10000, &[0, 100]);
        assert!(CompressionInfo::parse(&b, &feats("mc")).is_err());
        let b = build("LZ4Compressor", &[], 4096, None, 5000, &[0, 100, 200, 300]);
        assert!(CompressionInfo::parse(&b, &feats("mc")).is_err());
        // One trailing empty chunk is accepted (real C* 3.0 / mc files).
        let b = build("LZ4Compressor", &[], 4096, None, 5000, &[0, 100, 200]);
        let c = CompressionInfo::parse(&b, &feats("mc")).unwrap();
        assert_eq!(c.uncompressed_len(2).unwrap(), 0);
        // Overlapping offsets.
        let b = build("LZ4Compressor", &[], 4096, None, 5000, &[0, 2]);
        assert!(CompressionInfo::parse(&b, &feats("mc")).is_err());
        // Chunk length not a power of two.
        let b = build("LZ4Compressor", &[], 4000, None, 10, &[0]);
        assert!(CompressionInfo::parse(&b, &feats("mc")).is_err());
        // Trailing bytes.
        let mut b = build("LZ4Compressor", &[], 4096, None, 10, &[0]);
        b.push(0);
        assert!(CompressionInfo::parse(&b, &feats("mc")).is_err());
        // Empty data: no chunks.
        let b = build("LZ4Compressor", &[], 4096, None, 0, &[]);
        let c = CompressionInfo::parse(&b, &feats("mc")).unwrap();
        assert_eq!(c.chunk_count(), 0);
        assert!(c.uncompressed_len(0).is_err());
    }

    proptest! {
        #[test]
        fn random_and_mutated_input_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..120),
                                                 at in 0usize..47, x in any::<u8>()) {
            for v in ["ka", "mc", "nb"] {
                if let Ok(c) = CompressionInfo::parse(&bytes, &feats(v)) {
                    let _ = (c.chunk_range(0, 10), c.uncompressed_len(0), c.dictionary());
                }
            }
            let mut b = NB.to_vec();
            b[at] ^= x;
            let _ = CompressionInfo::parse(&b, &feats("nb"));
            let _ = CompressionInfo::parse(&NB[..at], &feats("nb"));
        }
    }

    /// Every CompressionInfo.db of the corpus decodes and matches its Data.db length.
    #[test]
    fn corpus_compression_info_files() {
        let files = corpus::files(|c| c == "CompressionInfo.db");
        if files.is_empty() {
            return;
        }
        let (mut row, mut other, mut corrupt_err) = (0, 0, 0);
        let mut kinds = std::collections::BTreeMap::new();
        let mut failures = Vec::new();
        let mut failed = std::collections::BTreeSet::new();
        for f in &files {
            let res = CompressionInfo::parse(&f.read(), &f.features()).and_then(|c| {
                if let Some(p) = f.sibling("Data.db") {
                    let len = crate::io::store::file_len(&p).unwrap_or(0);
                    c.check_file_len(len)?;
                    for i in 0..c.chunk_count() {
                        c.chunk_range(i, len)?;
                    }
                }
                Ok(c)
            });
            match res {
                Ok(c) => {
                    *kinds.entry(c.compressor.name().to_string()).or_insert(0) += 1;
                    if f.is_row_big() {
                        row += 1
                    } else {
                        other += 1
                    }
                }
                Err(e) if f.is_corrupt() => {
                    eprintln!("expected error in corrupt set: {}: {e}", f.path.display());
                    corrupt_err += 1;
                    failed.insert(corpus::short_name(f));
                }
                Err(e) => failures.push(format!("{}: {e}", f.path.display())),
            }
        }
        eprintln!(
            "CompressionInfo.db: {row} ma..oa + {other} other decoded, {corrupt_err} corrupt-set \
             errors, of {}; compressors {kinds:?}",
            files.len()
        );
        assert!(failures.is_empty(), "{failures:#?}");
        // The files MANIFEST.md marks corrupt that this check must reject.
        corpus::check_failures(
            "CompressionInfo.db",
            &files,
            &failed,
            &[
                "badcompression/la-1-big-CompressionInfo.db",
                "badcompression/la-2-big-CompressionInfo.db",
                "bigsummary/la-76-big-CompressionInfo.db",
                "compression-premature-eof/mc-1-big-CompressionInfo.db",
            ],
        );
    }
}
