//! CRC.db: per-chunk checksums of an uncompressed Data.db.
//!
//! `shared/docs/sstable-format.md` §8; C\* `o.a.c/io/util/ChecksummedSequentialWriter.java`,
//! `o.a.c/io/util/ChecksumWriter.java` (`writeChunkSize`, `appendDirect`);
//! Scylla `sstables/types.hh` (`checksum`), `sstables/checksum_utils.hh`.
//!
//! | offset | field | type |
//! |---|---|---|
//! | 0 | chunk_size | i32 (commonly 65536) |
//! | 4 | checksums | u32 per chunk, to the end of the file (no count) |
//!
//! Chunk `i` is Data.db bytes `[i × chunk_size, min((i+1) × chunk_size, len))`;
//! its checksum is CRC32 (`jb`, `ma`+) or Adler-32 (`ka`..`lb`) of those
//! bytes ([`ChecksumAlgo::for_crc_file`]).

use std::ops::Range;

use crate::component::Component;
use crate::cur::Cur;
use crate::digest::ChecksumAlgo;
use crate::error::{Error, ErrorKind, Result};

/// A decoded CRC.db.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CrcFile {
    /// Bytes of Data.db per checksum.
    pub chunk_size: u32,
    /// One checksum per chunk.
    pub checksums: Vec<u32>,
}

impl CrcFile {
    /// Decode a whole CRC.db.
    pub fn parse(bytes: &[u8]) -> Result<CrcFile> {
        let mut cur = Cur::new(bytes, Component::Crc, 0);
        let at = cur.clone();
        let size = cur.i32("CRC chunk size")?;
        let chunk_size = u32::try_from(size).ok().filter(|s| *s > 0).ok_or_else(|| {
            at.bad(
                "CRC chunk size",
                format!("chunk size {size} is not positive"),
            )
        })?;
        if !cur.remaining().is_multiple_of(4) {
            return Err(cur.bad(
                "CRC checksums",
                format!(
                    "{} bytes of checksums is not a multiple of 4",
                    cur.remaining()
                ),
            ));
        }
        let mut checksums = Vec::with_capacity(cur.remaining() / 4);
        while !cur.is_empty() {
            checksums.push(cur.u32("CRC checksum")?);
        }
        Ok(CrcFile {
            chunk_size,
            checksums,
        })
    }

    /// Number of chunks a Data.db of `data_len` bytes has.
    pub fn chunk_count_for(&self, data_len: u64) -> u64 {
        data_len.div_ceil(self.chunk_size as u64)
    }

    /// Byte range of chunk `i` in a Data.db of `data_len` bytes (empty past the end).
    pub fn chunk_range(&self, i: usize, data_len: u64) -> Range<u64> {
        let start = (i as u64)
            .saturating_mul(self.chunk_size as u64)
            .min(data_len);
        let end = start.saturating_add(self.chunk_size as u64).min(data_len);
        start..end
    }

    /// The checksum count must match the Data.db length.
    ///
    /// NOTE: real writers may end CRC.db with one extra checksum of an empty
    /// chunk (corpus `scylladb/wrong_counter_shard_order` mc/md: CRC32 `0`
    /// after the only real chunk), like the empty trailing compressed chunk of
    /// §7.1; §8 does not mention it. Exactly one such checksum is accepted.
    pub fn check_len(&self, data_len: u64, algo: ChecksumAlgo) -> Result<()> {
        let want = self.chunk_count_for(data_len);
        let n = self.checksums.len() as u64;
        if n == want || (n == want + 1 && self.checksums.last() == Some(&algo.checksum(&[]))) {
            return Ok(());
        }
        Err(Error::at(
            ErrorKind::BadValue(format!(
                "{} checksums but Data.db of {data_len} bytes has {want} chunks of {}",
                self.checksums.len(),
                self.chunk_size
            )),
            Component::Crc,
            4,
            "CRC checksums",
        ))
    }

    /// Verify chunk `i` given its bytes. The error is located in Data.db at
    /// the chunk's first byte.
    pub fn verify_chunk(&self, i: usize, chunk: &[u8], algo: ChecksumAlgo) -> Result<()> {
        let start = (i as u64).saturating_mul(self.chunk_size as u64);
        let Some(&expected) = self.checksums.get(i) else {
            return Err(Error::at(
                ErrorKind::BadValue(format!(
                    "no checksum for chunk {i} ({} stored)",
                    self.checksums.len()
                )),
                Component::Data,
                start,
                "CRC.db chunk",
            ));
        };
        let got = algo.checksum(chunk);
        if got == expected {
            return Ok(());
        }
        Err(Error::at(
            ErrorKind::ChecksumMismatch {
                algo: algo.name(),
                expected,
                got,
            },
            Component::Data,
            start,
            "CRC.db chunk",
        ))
    }

    /// Every problem found checking a whole Data.db: a count mismatch, then
    /// one error per mismatching chunk (empty when all is well).
    pub fn mismatches(&self, data: &[u8], algo: ChecksumAlgo) -> Vec<Error> {
        let mut out = Vec::new();
        if let Err(e) = self.check_len(data.len() as u64, algo) {
            out.push(e);
        }
        for (i, chunk) in data.chunks(self.chunk_size as usize).enumerate() {
            if i >= self.checksums.len() {
                break;
            }
            if let Err(e) = self.verify_chunk(i, chunk, algo) {
                out.push(e);
            }
        }
        out
    }

    /// Verify a whole Data.db: the first problem, if any.
    pub fn verify(&self, data: &[u8], algo: ChecksumAlgo) -> Result<()> {
        match self.mismatches(data, algo).into_iter().next() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::test_support as corpus;
    use proptest::prelude::*;

    fn build(chunk: u32, data: &[u8], algo: ChecksumAlgo) -> Vec<u8> {
        let mut b = (chunk as i32).to_be_bytes().to_vec();
        for c in data.chunks(chunk as usize) {
            b.extend_from_slice(&algo.checksum(c).to_be_bytes());
        }
        b
    }

    #[test]
    fn roundtrip_and_mismatch() {
        let data: Vec<u8> = (0..1000u32).map(|i| (i * 7) as u8).collect();
        for algo in [ChecksumAlgo::Crc32, ChecksumAlgo::Adler32] {
            let c = CrcFile::parse(&build(256, &data, algo)).unwrap();
            assert_eq!(c.checksums.len(), 4);
            assert_eq!(c.chunk_range(3, 1000), 768..1000);
            assert!(c.verify(&data, algo).is_ok());
            let mut bad = data.clone();
            bad[600] ^= 1;
            let errs = c.mismatches(&bad, algo);
            assert_eq!(errs.len(), 1);
            assert_eq!(errs[0].offset, Some(512));
            assert!(matches!(errs[0].kind, ErrorKind::ChecksumMismatch { .. }));
            // Truncated data: the count no longer matches.
            assert!(c.verify(&data[..700], algo).is_err());
        }
    }

    #[test]
    fn doc_example_and_malformed() {
        // §8: 3.x-uncompressed-collections.
        let c = CrcFile::parse(&[0, 1, 0, 0, 0x37, 0xf3, 0x9e, 0x72]).unwrap();
        assert_eq!(
            (c.chunk_size, c.checksums.as_slice()),
            (65536, &[0x37f3_9e72][..])
        );
        assert!(CrcFile::parse(&[0, 1, 0, 0, 1]).is_err());
        assert!(CrcFile::parse(&[0, 0, 0, 0]).is_err());
        assert!(CrcFile::parse(&[0xff, 0, 0, 0]).is_err());
        assert!(CrcFile::parse(&[0, 1]).is_err());
        let empty = CrcFile::parse(&[0, 1, 0, 0]).unwrap();
        assert!(empty.verify(&[], ChecksumAlgo::Crc32).is_ok());
        // One trailing checksum of an empty chunk is accepted, not two, not another value.
        let c = CrcFile {
            chunk_size: 4,
            checksums: vec![ChecksumAlgo::Crc32.checksum(b"abc"), 0],
        };
        assert!(c.verify(b"abc", ChecksumAlgo::Crc32).is_ok());
        let c = CrcFile {
            chunk_size: 4,
            checksums: vec![ChecksumAlgo::Crc32.checksum(b"abc"), 0, 0],
        };
        assert!(c.verify(b"abc", ChecksumAlgo::Crc32).is_err());
        let c = CrcFile {
            chunk_size: 4,
            checksums: vec![ChecksumAlgo::Adler32.checksum(b"abc"), 0],
        };
        assert!(c.verify(b"abc", ChecksumAlgo::Adler32).is_err());
        let c = CrcFile {
            chunk_size: 4,
            checksums: vec![ChecksumAlgo::Adler32.checksum(b"abc"), 1],
        };
        assert!(c.verify(b"abc", ChecksumAlgo::Adler32).is_ok());
    }

    proptest! {
        #[test]
        fn random_input_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..64),
                                     data in proptest::collection::vec(any::<u8>(), 0..64)) {
            if let Ok(c) = CrcFile::parse(&bytes) {
                let _ = c.mismatches(&data, ChecksumAlgo::Crc32);
                let _ = c.chunk_range(usize::MAX, u64::MAX);
            }
        }
    }

    /// Every CRC.db in the corpus decodes and matches its Data.db, except in
    /// sets that are corrupt on purpose.
    #[test]
    fn corpus_crc_files() {
        let files = corpus::files(|c| c == "CRC.db");
        if files.is_empty() {
            return;
        }
        let (mut row, mut other, mut corrupt_err, mut chunks) = (0, 0, 0, 0);
        let mut failures = Vec::new();
        let mut failed = std::collections::BTreeSet::new();
        for f in &files {
            let algo = ChecksumAlgo::for_crc_file(&f.features());
            let res = CrcFile::parse(&f.read()).and_then(|c| {
                if let Some(data) = f.read_sibling("Data.db") {
                    c.verify(&data, algo)?;
                    chunks += c.checksums.len();
                }
                Ok(c)
            });
            match res {
                Ok(_) if f.is_row_big() => row += 1,
                Ok(_) => other += 1,
                Err(e) if f.is_corrupt() => {
                    eprintln!("expected error in corrupt set: {}: {e}", f.path.display());
                    corrupt_err += 1;
                    failed.insert(corpus::short_name(f));
                }
                Err(e) => failures.push(format!("{}: {e}", f.path.display())),
            }
        }
        eprintln!(
            "CRC.db: {row} ma..oa + {other} ka/la decoded and verified ({chunks} chunks), \
             {corrupt_err} corrupt-set errors, of {}",
            files.len()
        );
        assert!(failures.is_empty(), "{failures:#?}");
        // The files MANIFEST.md marks corrupt that this check must reject.
        corpus::check_failures(
            "CRC.db",
            &files,
            &failed,
            &[
                "3.x-uncompressed-integrity_check-invalid_checksums/me-1-big-CRC.db",
                "broken_ranges/la-2-big-CRC.db",
                "bad_column_name/la-58-big-CRC.db",
                "broken_close_tombstone/mc-122-big-CRC.db",
                "broken_end_composite/la-76-big-CRC.db",
                "broken_open_tombstone/mc-122-big-CRC.db",
                "broken_start_composite/la-76-big-CRC.db",
                "invalid_boundary/mc-33-big-CRC.db",
                "mismatched_timestamp/mc-122-big-CRC.db",
                "static_with_clustering/la-58-big-CRC.db",
            ],
        );
    }
}
