//! Decompressing one chunk of a compressed Data.db.
//!
//! `shared/docs/sstable-format.md` §7.2–7.3; C\* `o.a.c/io/util/CompressedChunkReader.java`,
//! `o.a.c/io/compress/{LZ4,Snappy,Deflate,Zstd,Noop}Compressor.java`;
//! Scylla `sstables/compress.cc`.
//!
//! ```text
//! chunk i := payload  checksum:u32 BE          [offset_i, offset_{i+1}) of Data.db (§7.1)
//! checksum = CRC32 (ma+) | Adler-32 (ka/la) of the payload bytes as stored
//! ```
//!
//! | compressor | payload |
//! |---|---|
//! | LZ4 | `uncompressed_len: u32 LE` + raw LZ4 block |
//! | Snappy | raw Snappy block (own varint length header) |
//! | Deflate | zlib stream |
//! | Zstd | one zstd frame |
//! | Noop | raw bytes |
//! | Scylla `*WithDicts` | needs the shared dictionary: [`ErrorKind::Unsupported`] |
//!
//! NOTE (§7.2): in `na`+ a payload of `max_compressed_length` bytes or more
//! is the chunk stored **raw** (possibly zero-padded: trim to the expected
//! length). The decompressed length must be exactly the chunk's expected
//! uncompressed length ([`CompressionInfo::uncompressed_len`]); a trailing
//! empty chunk (see [`crate::compression`]) decompresses to nothing.

use std::io::Read;

use crate::component::Component;
use crate::compression::{CompressionInfo, Compressor};
use crate::digest::ChecksumAlgo;
use crate::error::{Error, ErrorKind, Result};
use crate::version::Features;

/// How a chunk was stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChunkEncoding {
    /// Compressed with the table's compressor.
    Compressed,
    /// Stored raw (`na`+, payload `>= max_compressed_length`).
    Raw,
}

/// Decompresses chunks of one sstable's Data.db.
#[derive(Debug, Clone)]
pub struct ChunkDecompressor {
    compressor: Compressor,
    algo: ChecksumAlgo,
    max_compressed_length: Option<u32>,
    chunk_length: u32,
}

impl ChunkDecompressor {
    /// A decompressor for the chunks described by `info`.
    pub fn new(info: &CompressionInfo, features: &Features) -> ChunkDecompressor {
        ChunkDecompressor {
            compressor: info.compressor.clone(),
            algo: ChecksumAlgo::for_chunks(features),
            max_compressed_length: info.max_compressed_length,
            chunk_length: info.chunk_length,
        }
    }

    /// The checksum algorithm of the chunks.
    pub fn checksum_algo(&self) -> ChecksumAlgo {
        self.algo
    }

    /// Check chunk `index`'s trailing checksum; `stored` is the chunk's bytes
    /// in Data.db (payload + checksum) starting at `file_offset`. Returns the payload.
    pub fn verify<'b>(&self, index: usize, file_offset: u64, stored: &'b [u8]) -> Result<&'b [u8]> {
        let (payload, sum) = split_checksum(index, file_offset, stored)?;
        let got = self.algo.checksum(payload);
        if got != sum {
            return Err(Error::at(
                ErrorKind::ChecksumMismatch {
                    algo: self.algo.name(),
                    expected: sum,
                    got,
                },
                Component::Data,
                file_offset,
                "compressed chunk checksum",
            )
            .in_chunk(index as u64));
        }
        Ok(payload)
    }

    /// Verify and decompress chunk `index` into `out` (cleared first), which
    /// ends up exactly `expected_len` bytes long.
    pub fn decompress(
        &self,
        index: usize,
        file_offset: u64,
        stored: &[u8],
        expected_len: usize,
        out: &mut Vec<u8>,
    ) -> Result<ChunkEncoding> {
        out.clear();
        self.decompress_append(index, file_offset, stored, expected_len, out)
    }

    /// [`ChunkDecompressor::decompress`], appending the chunk to `out`
    /// (a reader's window) instead of replacing its content: no copy from a
    /// scratch buffer. On error `out` is left as it was.
    pub fn decompress_append(
        &self,
        index: usize,
        file_offset: u64,
        stored: &[u8],
        expected_len: usize,
        out: &mut Vec<u8>,
    ) -> Result<ChunkEncoding> {
        let payload = self.verify(index, file_offset, stored)?;
        let base = out.len();
        let r = self.decompress_tail(index, file_offset, payload, expected_len, out, base);
        if r.is_err() {
            out.truncate(base);
        }
        r
    }

    /// Decompress a payload (checksum already stripped, not verified) into
    /// `out` (cleared first), e.g. when checksums are skipped
    /// (`crc_check_chance`).
    pub fn decompress_payload(
        &self,
        index: usize,
        file_offset: u64,
        payload: &[u8],
        expected_len: usize,
        out: &mut Vec<u8>,
    ) -> Result<ChunkEncoding> {
        out.clear();
        self.decompress_tail(index, file_offset, payload, expected_len, out, 0)
    }

    /// Decompress `payload` into `out[base..]` (`out.len() == base` on entry).
    fn decompress_tail(
        &self,
        index: usize,
        file_offset: u64,
        payload: &[u8],
        expected_len: usize,
        out: &mut Vec<u8>,
        base: usize,
    ) -> Result<ChunkEncoding> {
        let fail = |msg: String| {
            Error::at(
                ErrorKind::Decompress(format!(
                    "chunk {index} at Data.db offset {file_offset}: {msg}"
                )),
                Component::Data,
                file_offset,
                "compressed chunk",
            )
        };
        if expected_len > self.chunk_length as usize {
            return Err(fail(format!(
                "expected length {expected_len} exceeds the chunk length {}",
                self.chunk_length
            )));
        }
        if self
            .max_compressed_length
            .is_some_and(|m| payload.len() >= m as usize)
        {
            let raw = payload.get(..expected_len).ok_or_else(|| {
                fail(format!(
                    "raw chunk of {} bytes, expected {expected_len}",
                    payload.len()
                ))
            })?;
            out.extend_from_slice(raw);
            return Ok(ChunkEncoding::Raw);
        }
        let got = match &self.compressor {
            Compressor::Noop => {
                out.extend_from_slice(payload);
                payload.len()
            }
            Compressor::Lz4 => {
                let (len, block) = match payload {
                    [a, b, c, d, rest @ ..] => {
                        (u32::from_le_bytes([*a, *b, *c, *d]) as usize, rest)
                    }
                    _ => return Err(fail(format!("LZ4 payload of {} bytes", payload.len()))),
                };
                if len != expected_len {
                    return Err(fail(format!(
                        "LZ4 length prefix says {len} bytes, expected {expected_len}"
                    )));
                }
                out.resize(base + expected_len, 0);
                lz4_flex::block::decompress_into(block, &mut out[base..])
                    .map_err(|e| fail(format!("LZ4: {e}")))?
            }
            Compressor::Snappy => {
                let len =
                    snap::raw::decompress_len(payload).map_err(|e| fail(format!("Snappy: {e}")))?;
                if len != expected_len {
                    return Err(fail(format!(
                        "Snappy header says {len} bytes, expected {expected_len}"
                    )));
                }
                out.resize(base + expected_len, 0);
                snap::raw::Decoder::new()
                    .decompress(payload, &mut out[base..])
                    .map_err(|e| fail(format!("Snappy: {e}")))?
            }
            Compressor::Deflate => {
                // Bound the output: one byte more than expected reveals overlong streams.
                let mut d = flate2::read::ZlibDecoder::new(payload).take(expected_len as u64 + 1);
                d.read_to_end(out)
                    .map_err(|e| fail(format!("Deflate: {e}")))?
            }
            Compressor::Zstd => {
                out.resize(base + expected_len, 0);
                // NOTE: a fresh context per chunk; callers decompressing many
                // zstd chunks may want to cache one.
                zstd::bulk::decompress_to_buffer(payload, &mut out[base..])
                    .map_err(|e| fail(format!("Zstd: {e}")))?
            }
            Compressor::Lz4WithDicts | Compressor::ZstdWithDicts | Compressor::Other(_) => {
                return Err(Error::at(
                    ErrorKind::Unsupported(format!(
                        "chunk {index}: compressor {} is not supported",
                        self.compressor.name()
                    )),
                    Component::Data,
                    file_offset,
                    "compressed chunk",
                ))
            }
        };
        if got != expected_len {
            return Err(fail(format!(
                "decompressed to {got} bytes, expected {expected_len}"
            )));
        }
        out.truncate(base + expected_len);
        Ok(ChunkEncoding::Compressed)
    }
}

fn split_checksum(index: usize, file_offset: u64, stored: &[u8]) -> Result<(&[u8], u32)> {
    match stored.len().checked_sub(4).map(|n| stored.split_at(n)) {
        Some((payload, [a, b, c, d])) => Ok((payload, u32::from_be_bytes([*a, *b, *c, *d]))),
        _ => Err(Error::at(
            ErrorKind::BadValue(format!(
                "chunk {index} has {} bytes, too short for its checksum",
                stored.len()
            )),
            Component::Data,
            file_offset,
            "compressed chunk",
        )),
    }
}

/// Verify and decompress chunk `index` of a whole compressed Data.db held in
/// memory (`data`), into `out`.
pub fn decompress_chunk(
    info: &CompressionInfo,
    features: &Features,
    index: usize,
    data: &[u8],
    out: &mut Vec<u8>,
) -> Result<ChunkEncoding> {
    let range = info.chunk_range(index, data.len() as u64)?;
    let stored = data
        .get(range.start as usize..range.end as usize)
        .ok_or_else(|| {
            Error::at(
                ErrorKind::UnexpectedEof {
                    need: range.end - range.start,
                    have: 0,
                },
                Component::Data,
                range.start,
                "compressed chunk",
            )
        })?;
    let expected = info.uncompressed_len(index)?;
    ChunkDecompressor::new(info, features).decompress(index, range.start, stored, expected, out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::test_support as corpus;
    use crate::version::Version;
    use proptest::prelude::*;
    use std::io::Write;

    fn feats(v: &str) -> Features {
        Version::parse(v).unwrap().features()
    }

    fn dec(c: Compressor, mcl: Option<u32>, v: &str) -> ChunkDecompressor {
        ChunkDecompressor {
            compressor: c,
            algo: ChecksumAlgo::for_chunks(&feats(v)),
            max_compressed_length: mcl,
            chunk_length: 4096,
        }
    }

    fn with_sum(payload: &[u8], algo: ChecksumAlgo) -> Vec<u8> {
        let mut v = payload.to_vec();
        v.extend_from_slice(&algo.checksum(payload).to_be_bytes());
        v
    }

    fn sample() -> Vec<u8> {
        (0..3000u32)
            .map(|i| (i % 17) as u8 ^ (i / 100) as u8)
            .collect()
    }

    #[test]
    fn every_codec_roundtrips() {
        let data = sample();
        let mut lz4 = (data.len() as u32).to_le_bytes().to_vec();
        lz4.extend(lz4_flex::block::compress(&data));
        let snappy = snap::raw::Encoder::new().compress_vec(&data).unwrap();
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        z.write_all(&data).unwrap();
        let deflate = z.finish().unwrap();
        let zstd = zstd::bulk::compress(&data, 3).unwrap();
        let mut out = Vec::new();
        for (c, p) in [
            (Compressor::Lz4, lz4),
            (Compressor::Snappy, snappy),
            (Compressor::Deflate, deflate),
            (Compressor::Zstd, zstd),
            (Compressor::Noop, data.clone()),
        ] {
            for v in ["la", "mc", "nb"] {
                let d = dec(c.clone(), None, v);
                let stored = with_sum(&p, d.checksum_algo());
                let enc = d
                    .decompress(3, 1000, &stored, data.len(), &mut out)
                    .unwrap();
                assert_eq!(enc, ChunkEncoding::Compressed);
                assert_eq!(out, data, "{c:?} {v}");
                // Wrong expected length is an error naming the chunk.
                let e = d
                    .decompress(3, 1000, &stored, data.len() - 1, &mut out)
                    .unwrap_err();
                assert_eq!(e.offset, Some(1000));
                assert!(e.to_string().contains("chunk 3"), "{e}");
                // A flipped payload byte fails the checksum.
                let mut bad = stored.clone();
                bad[10] ^= 0x40;
                let e = d
                    .decompress(3, 1000, &bad, data.len(), &mut out)
                    .unwrap_err();
                assert!(matches!(e.kind, ErrorKind::ChecksumMismatch { .. }), "{e}");
            }
        }
    }

    #[test]
    fn raw_chunks_and_empty_lz4_chunk() {
        let data = sample();
        let d = dec(Compressor::Lz4, Some(2000), "nb");
        let mut out = Vec::new();
        // Raw chunk, zero-padded beyond the expected length.
        let mut padded = data.clone();
        padded.extend_from_slice(&[0; 10]);
        let stored = with_sum(&padded, ChecksumAlgo::Crc32);
        assert_eq!(
            d.decompress(0, 0, &stored, data.len(), &mut out).unwrap(),
            ChunkEncoding::Raw
        );
        assert_eq!(out, data);
        // Raw chunk shorter than expected.
        let stored = with_sum(&data[..2500], ChecksumAlgo::Crc32);
        assert!(d.decompress(0, 0, &stored, data.len(), &mut out).is_err());
        // Trailing empty LZ4 chunk: length 0, one-byte block.
        let stored = with_sum(&[0, 0, 0, 0, 0], ChecksumAlgo::Crc32);
        d.decompress(5, 0, &stored, 0, &mut out).unwrap();
        assert!(out.is_empty());
    }

    #[test]
    fn malformed_chunks() {
        let d = dec(Compressor::Lz4, None, "mc");
        let mut out = Vec::new();
        assert!(d.decompress(0, 7, &[1, 2, 3], 10, &mut out).is_err());
        let stored = with_sum(&[10, 0, 0, 0, 0xff, 0xff], ChecksumAlgo::Crc32);
        assert!(d.decompress(0, 7, &stored, 10, &mut out).is_err());
        let stored = with_sum(&[1, 0], ChecksumAlgo::Crc32);
        assert!(d.decompress(0, 7, &stored, 1, &mut out).is_err());
        let d = dec(Compressor::ZstdWithDicts, None, "me");
        let stored = with_sum(&[1, 2], ChecksumAlgo::Crc32);
        let e = d.decompress(0, 7, &stored, 1, &mut out).unwrap_err();
        assert!(matches!(e.kind, ErrorKind::Unsupported(_)));
        // Expected length beyond the chunk length.
        let d = dec(Compressor::Noop, None, "mc");
        assert!(d
            .decompress_payload(0, 0, &[0; 5000], 5000, &mut out)
            .is_err());
    }

    proptest! {
        #[test]
        fn random_payloads_never_panic(payload in proptest::collection::vec(any::<u8>(), 0..200),
                                       expected in 0usize..5000) {
            let mut out = Vec::new();
            for c in [Compressor::Lz4, Compressor::Snappy, Compressor::Deflate, Compressor::Zstd, Compressor::Noop] {
                let d = dec(c, Some(150), "nb");
                let _ = d.decompress_payload(0, 0, &payload, expected, &mut out);
                let _ = d.decompress(0, 0, &payload, expected, &mut out);
            }
        }
    }

    /// Every chunk of every compressed Data.db in the corpus verifies and
    /// decompresses to its expected length.
    #[test]
    fn corpus_compressed_data_files() {
        let files = corpus::files(|c| c == "CompressionInfo.db");
        if files.is_empty() {
            return;
        }
        let (mut files_ok, mut chunks, mut raw, mut corrupt_err) = (0, 0, 0, 0);
        let mut failures = Vec::new();
        let mut failed = std::collections::BTreeSet::new();
        let mut out = Vec::new();
        for f in &files {
            let feats = f.features();
            let Some(data) = f.read_sibling("Data.db") else {
                continue;
            };
            let Ok(info) = CompressionInfo::parse(&f.read(), &feats) else {
                continue;
            };
            let mut total = 0u64;
            let res = (0..info.chunk_count()).try_for_each(|i| {
                let enc = decompress_chunk(&info, &feats, i, &data, &mut out)?;
                chunks += 1;
                raw += (enc == ChunkEncoding::Raw) as usize;
                total += out.len() as u64;
                Ok::<_, Error>(())
            });
            let res = res.and_then(|_| {
                if total == info.data_length {
                    Ok(())
                } else {
                    Err(Error::new(
                        ErrorKind::BadValue(format!("{total} bytes decompressed")),
                        "",
                    ))
                }
            });
            match res {
                Ok(()) => files_ok += 1,
                Err(e) if f.is_corrupt() => {
                    eprintln!("expected error in corrupt set: {}: {e}", f.path.display());
                    corrupt_err += 1;
                    failed.insert(corpus::short_name(f));
                }
                Err(e) => failures.push(format!("{}: {e}", f.path.display())),
            }
        }
        eprintln!(
            "compressed Data.db: {files_ok} files fully decompressed ({chunks} chunks, {raw} raw), \
             {corrupt_err} corrupt-set errors"
        );
        assert!(failures.is_empty(), "{failures:#?}");
        // The files MANIFEST.md marks corrupt that this check must reject.
        corpus::check_failures(
            "compressed Data.db",
            &files,
            &failed,
            &[
                "3.x-lz4-integrity_check-invalid_checksums/me-1-big-CompressionInfo.db",
                "bigsummary/la-76-big-CompressionInfo.db",
                "compression-premature-eof/mc-1-big-CompressionInfo.db",
            ],
        );
    }
}
