//! `Digest.*`: the whole-Data.db checksum, and the checksum algorithms shared
//! by CRC.db and compressed chunks.
//!
//! `shared/docs/sstable-format.md` §8; C\* `o.a.c/io/util/ChecksumWriter.java`
//! (`writeFullChecksum`), `o.a.c/io/sstable/format/SSTableFormat.java`
//! (`Components.DIGEST`); Scylla `sstables/checksum_utils.hh`, `sstables/sstables.cc`.
//!
//! ```text
//! Digest.<algo> := decimal ASCII of the checksum of the whole Data.db file as
//!                  stored (compressed files: payloads and inline checksums), no newline
//! ```
//!
//! | version | file name | algorithm |
//! |---|---|---|
//! | `ka` | `Digest.sha1` (name is historical, NOTE §8/§16) | Adler-32 |
//! | `la` (C\* 2.2) | `Digest.adler32` | Adler-32 |
//! | `la` (Scylla) | `Digest.sha1` | Adler-32 |
//! | `ma`+, `da`, Scylla `mc`+ | `Digest.crc32` | CRC32 |
//!
//! Pre-2.1 (`jb`) `Digest.sha1` files hold a real hex SHA-1 of Data.db,
//! `sha1sum` style (`<40 hex>  <file name>`): [`Digest::parse`] reports it as
//! unsupported, and `checksums` (which hashes Data.db anyway) verifies it. CRC.db checksums are CRC32 for `jb` and Adler-32 for
//! `ka`..`lb`; compressed chunk checksums are Adler-32 from `jb` to `lb`.

use crate::component::Component;
use crate::cur::Cur;
use crate::error::{Error, ErrorKind, Result};
use crate::version::Features;

/// A 32-bit checksum algorithm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ChecksumAlgo {
    /// CRC32 (IEEE), `ma`+.
    Crc32,
    /// Adler-32, `ka`/`la`.
    Adler32,
}

impl ChecksumAlgo {
    /// The algorithm of the checksums after compressed chunks
    /// (`hasPostCompressionAdlerChecksums`: Adler-32 for `jb` to `lb`).
    pub fn for_chunks(f: &Features) -> ChecksumAlgo {
        if f.adler32_chunk_checksums {
            ChecksumAlgo::Adler32
        } else {
            ChecksumAlgo::Crc32
        }
    }

    /// The algorithm of CRC.db, the checksums of uncompressed Data.db
    /// (`hasAllAdlerChecksums`: Adler-32 for `ka` to `lb`; `jb` used CRC32).
    pub fn for_crc_file(f: &Features) -> ChecksumAlgo {
        if f.adler32_checksums {
            ChecksumAlgo::Adler32
        } else {
            ChecksumAlgo::Crc32
        }
    }

    /// The algorithm of a `Digest.*` component, from its suffix as listed in
    /// the TOC (`Digest.crc32`, `Digest.adler32`, `Digest.sha1`).
    pub fn for_digest_name(name: &str) -> Result<ChecksumAlgo> {
        match name.rsplit('-').next().unwrap_or(name) {
            "Digest.crc32" => Ok(ChecksumAlgo::Crc32),
            "Digest.adler32" => Ok(ChecksumAlgo::Adler32),
            // NOTE: 2.1+ writes Adler-32 into the historically named file (§8, §16).
            "Digest.sha1" => Ok(ChecksumAlgo::Adler32),
            other => Err(Error::new(
                ErrorKind::Unsupported(format!("unknown digest component {other:?}")),
                "digest name",
            )
            .in_component(Component::Digest)),
        }
    }

    /// Lower-case name, as used in errors (`crc32`, `adler32`).
    pub fn name(self) -> &'static str {
        match self {
            ChecksumAlgo::Crc32 => "crc32",
            ChecksumAlgo::Adler32 => "adler32",
        }
    }

    /// Checksum of one buffer.
    pub fn checksum(self, data: &[u8]) -> u32 {
        let mut h = self.hasher();
        h.update(data);
        h.finish()
    }

    /// An incremental hasher.
    pub fn hasher(self) -> Checksummer {
        match self {
            ChecksumAlgo::Crc32 => Checksummer::Crc32(crc32fast::Hasher::new()),
            ChecksumAlgo::Adler32 => Checksummer::Adler32(adler::Adler32::new()),
        }
    }
}

/// Incremental CRC32 or Adler-32 over a byte stream.
#[derive(Clone)]
pub enum Checksummer {
    /// CRC32 state.
    Crc32(crc32fast::Hasher),
    /// Adler-32 state.
    Adler32(adler::Adler32),
}

impl std::fmt::Debug for Checksummer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Checksummer")
            .field(&self.algo())
            .field(&self.finish())
            .finish()
    }
}

impl Checksummer {
    /// Feed bytes.
    pub fn update(&mut self, data: &[u8]) {
        match self {
            Checksummer::Crc32(h) => h.update(data),
            Checksummer::Adler32(h) => h.write_slice(data),
        }
    }

    /// The checksum of everything fed so far (the state is kept).
    pub fn finish(&self) -> u32 {
        match self {
            Checksummer::Crc32(h) => h.clone().finalize(),
            Checksummer::Adler32(h) => h.checksum(),
        }
    }

    /// The algorithm.
    pub fn algo(&self) -> ChecksumAlgo {
        match self {
            Checksummer::Crc32(_) => ChecksumAlgo::Crc32,
            Checksummer::Adler32(_) => ChecksumAlgo::Adler32,
        }
    }
}

/// What a verified digest covered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DigestScope {
    /// The whole Data.db file as stored (§8).
    WholeFile,
    /// Compressed Data.db, chunk payloads only, without the per-chunk
    /// checksums (NOTE: some `ka`/`la` writers, see [`Digest::verify_compressed`]).
    PayloadsOnly,
}

/// A decoded `Digest.*` file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Digest {
    /// The algorithm the file name implies.
    pub algo: ChecksumAlgo,
    /// The stored checksum of Data.db.
    pub value: u32,
}

impl Digest {
    /// Decode a digest file's text; `name` is its component suffix as listed
    /// in the TOC (or the whole file name).
    pub fn parse(bytes: &[u8], name: &str) -> Result<Digest> {
        let algo = ChecksumAlgo::for_digest_name(name)?;
        let cur = Cur::new(bytes, Component::Digest, 0);
        let text = std::str::from_utf8(bytes)
            .map_err(|e| {
                cur.bad(
                    "digest text",
                    format!("not UTF-8 at byte {}", e.valid_up_to()),
                )
            })?
            .trim();
        if text.len() == 40 && text.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(cur.err(
                ErrorKind::Unsupported("hex SHA-1 digest (pre-2.1 sstable)".into()),
                "digest text",
            ));
        }
        // C* writes the unsigned value (`Checksum.getValue()`); accept a
        // negative 32-bit rendering too, as some writers use signed ints.
        let v: i64 = text
            .parse()
            .map_err(|_| cur.bad("digest text", format!("not a decimal checksum: {text:?}")))?;
        if !(i32::MIN as i64..=u32::MAX as i64).contains(&v) {
            return Err(cur.bad("digest text", format!("checksum {v} out of 32-bit range")));
        }
        Ok(Digest {
            algo,
            value: v as u32,
        })
    }

    /// A hasher to feed Data.db to, in order.
    pub fn hasher(&self) -> Checksummer {
        self.algo.hasher()
    }

    /// Compare a computed checksum with the stored one.
    pub fn check(&self, computed: u32) -> Result<()> {
        if computed == self.value {
            return Ok(());
        }
        Err(Error::at(
            ErrorKind::ChecksumMismatch {
                algo: self.algo.name(),
                expected: self.value,
                got: computed,
            },
            Component::Data,
            0,
            "Data.db digest",
        ))
    }

    /// Verify a whole Data.db held in memory.
    pub fn verify(&self, data: &[u8]) -> Result<()> {
        self.check(self.algo.checksum(data))
    }

    /// Verify a compressed Data.db given its chunk offsets (CompressionInfo).
    ///
    /// NOTE: §8 says the digest covers the whole file as stored, and most
    /// files agree; but several compressed `ka`/`la` files (C\* 2.1
    /// `legacy_ka_14912`; Scylla-written `la` in scylladb/{composite,
    /// compressed, deleted_cell, set}) hold the checksum of the chunk
    /// payloads only, without each chunk's trailing 4-byte checksum. Both are
    /// accepted here (the second only for Adler-32, i.e. `ka`/`la`); the
    /// result says which one matched.
    pub fn verify_compressed(&self, data: &[u8], chunk_offsets: &[u64]) -> Result<DigestScope> {
        let whole = self.algo.checksum(data);
        if whole == self.value {
            return Ok(DigestScope::WholeFile);
        }
        if self.algo == ChecksumAlgo::Adler32 {
            let mut h = self.hasher();
            let len = data.len() as u64;
            for (i, &start) in chunk_offsets.iter().enumerate() {
                let end = chunk_offsets.get(i + 1).copied().unwrap_or(len).min(len);
                let payload_end = end.saturating_sub(4).max(start.min(end));
                if let Some(p) = data.get(start as usize..payload_end as usize) {
                    h.update(p);
                }
            }
            if h.finish() == self.value {
                return Ok(DigestScope::PayloadsOnly);
            }
        }
        self.check(whole).map(|_| DigestScope::WholeFile)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::compression::CompressionInfo;
    use crate::test_support as corpus;
    use proptest::prelude::*;

    #[test]
    fn compressed_scopes() {
        // Two chunks: payload "ab" + checksum, payload "cde" + checksum.
        let data = b"ab1234cde5678";
        let offsets = [0, 6];
        let whole = Digest {
            algo: ChecksumAlgo::Adler32,
            value: ChecksumAlgo::Adler32.checksum(data),
        };
        assert_eq!(
            whole.verify_compressed(data, &offsets).unwrap(),
            DigestScope::WholeFile
        );
        let payloads = Digest {
            algo: ChecksumAlgo::Adler32,
            value: ChecksumAlgo::Adler32.checksum(b"abcde"),
        };
        assert_eq!(
            payloads.verify_compressed(data, &offsets).unwrap(),
            DigestScope::PayloadsOnly
        );
        let crc = Digest {
            algo: ChecksumAlgo::Crc32,
            value: ChecksumAlgo::Crc32.checksum(b"abcde"),
        };
        assert!(crc.verify_compressed(data, &offsets).is_err());
        // Offsets past the data do not panic.
        assert!(payloads.verify_compressed(data, &[0, 100, 3]).is_err());
    }

    #[test]
    fn algorithms() {
        assert_eq!(ChecksumAlgo::Crc32.checksum(b"123456789"), 0xCBF4_3926);
        assert_eq!(ChecksumAlgo::Adler32.checksum(b"Wikipedia"), 0x11E6_0398);
        let mut h = ChecksumAlgo::Crc32.hasher();
        h.update(b"1234");
        h.update(b"56789");
        assert_eq!(h.finish(), 0xCBF4_3926);
        assert_eq!(h.finish(), 0xCBF4_3926);
        assert_eq!(
            ChecksumAlgo::for_digest_name("nb-1-big-Digest.crc32").unwrap(),
            ChecksumAlgo::Crc32
        );
        assert_eq!(
            ChecksumAlgo::for_digest_name("Digest.sha1").unwrap(),
            ChecksumAlgo::Adler32
        );
        assert!(ChecksumAlgo::for_digest_name("Digest.md5").is_err());
    }

    #[test]
    fn parse_text() {
        let d = Digest::parse(b"1899914505", "Digest.crc32").unwrap();
        assert_eq!(d.value, 1899914505);
        assert_eq!(
            Digest::parse(b"4294967295\n", "Digest.crc32")
                .unwrap()
                .value,
            u32::MAX
        );
        assert_eq!(
            Digest::parse(b"-1", "Digest.adler32").unwrap().value,
            u32::MAX
        );
        assert!(Digest::parse(b"4294967296", "Digest.crc32").is_err());
        assert!(Digest::parse(b"", "Digest.crc32").is_err());
        assert!(Digest::parse(b"12a", "Digest.crc32").is_err());
        let e =
            Digest::parse(b"da39a3ee5e6b4b0d3255bfef95601890afd80709", "Digest.sha1").unwrap_err();
        assert!(matches!(e.kind, ErrorKind::Unsupported(_)));
        let d = Digest::parse(b"3421780263", "Digest.crc32").unwrap();
        assert!(d.verify(b"123456789").is_err());
        assert!(Digest::parse(b"3421780262", "Digest.crc32")
            .unwrap()
            .verify(b"123456789")
            .is_ok());
        assert!(Digest {
            algo: ChecksumAlgo::Crc32,
            value: 0xCBF4_3926
        }
        .verify(b"123456789")
        .is_ok());
    }

    proptest! {
        #[test]
        fn random_text_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..30)) {
            let _ = Digest::parse(&bytes, "Digest.crc32");
        }
    }

    /// Every digest in the corpus decodes and matches its Data.db, except in
    /// sets that are corrupt on purpose (invalid_digest).
    #[test]
    fn corpus_digest_files() {
        let files = corpus::files(|c| c.starts_with("Digest."));
        if files.is_empty() {
            return;
        }
        let (mut matched, mut no_data, mut corrupt_err, mut payload_only) = (0, 0, 0, 0);
        let mut by_algo = std::collections::BTreeMap::new();
        let mut failures = Vec::new();
        let mut failed = std::collections::BTreeSet::new();
        let mut sha1 = 0;
        for f in &files {
            // Pre-2.1 (`jb`) Digest.sha1: sha1sum output of Data.db.
            let text = f.read();
            if let Some(hex) = text
                .get(..40)
                .filter(|h| h.iter().all(u8::is_ascii_hexdigit))
            {
                match f.read_sibling("Data.db") {
                    Some(data) => {
                        let got = sha1_smol::Sha1::from(&data).digest().to_string();
                        if got.as_bytes() == hex {
                            sha1 += 1;
                        } else if !f.is_corrupt() {
                            failures.push(format!("{}: sha1 {got}", f.path.display()));
                        }
                    }
                    None => no_data += 1,
                }
                continue;
            }
            let res = Digest::parse(&text, &f.component).and_then(|d| {
                *by_algo
                    .entry((f.version().as_str().to_string(), d.algo.name()))
                    .or_insert(0) += 1;
                let offsets = f
                    .read_sibling("CompressionInfo.db")
                    .and_then(|c| CompressionInfo::parse(&c, &f.features()).ok())
                    .map(|c| c.chunk_offsets);
                match (f.read_sibling("Data.db"), offsets) {
                    (Some(data), Some(offsets)) if !data.is_empty() => {
                        let scope = d.verify_compressed(&data, &offsets)?;
                        payload_only += (scope == DigestScope::PayloadsOnly) as usize;
                        Ok(true)
                    }
                    (Some(data), None) if !data.is_empty() => {
                        let mut h = d.hasher();
                        for part in data.chunks(1000) {
                            h.update(part);
                        }
                        d.check(h.finish()).map(|_| true)
                    }
                    _ => Ok(false),
                }
            });
            match res {
                Ok(true) => matched += 1,
                Ok(false) => no_data += 1,
                Err(e) if f.is_corrupt() => {
                    eprintln!("expected error in corrupt set: {}: {e}", f.path.display());
                    corrupt_err += 1;
                    failed.insert(corpus::short_name(f));
                }
                Err(e) => failures.push(format!("{}: {e}", f.path.display())),
            }
        }
        eprintln!(
            "Digest.*: {matched} match Data.db ({payload_only} over compressed payloads only), \
             {no_data} without Data.db, {corrupt_err} corrupt-set errors, {sha1} pre-2.1 SHA-1 \
             match, of {}; (version, algo) counts {by_algo:?}",
            files.len()
        );
        assert!(failures.is_empty(), "{failures:#?}");
        // The files MANIFEST.md marks corrupt that this check must reject.
        corpus::check_failures(
            "Digest",
            &files,
            &failed,
            &[
                "3.x-lz4-integrity_check-invalid_checksums/me-1-big-Digest.crc32",
                "3.x-lz4-integrity_check-invalid_digest/me-1-big-Digest.crc32",
                "3.x-uncompressed-integrity_check-invalid_checksums/me-1-big-Digest.crc32",
                "3.x-uncompressed-integrity_check-invalid_digest/me-1-big-Digest.crc32",
                "bad_column_name/la-58-big-Digest.sha1",
                "broken_close_tombstone/mc-122-big-Digest.crc32",
                "broken_end_composite/la-76-big-Digest.sha1",
                "broken_open_tombstone/mc-122-big-Digest.crc32",
                "broken_start_composite/la-76-big-Digest.sha1",
                "invalid_boundary/mc-33-big-Digest.crc32",
                "mismatched_timestamp/mc-122-big-Digest.crc32",
                "static_with_clustering/la-58-big-Digest.sha1",
            ],
        );
    }
}
