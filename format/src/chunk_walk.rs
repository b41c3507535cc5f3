//! Compressed chunk boundaries found again by walking Data.db: every
//! compressed chunk is followed by a checksum of its compressed bytes
//! (CRC32, Adler-32 before `ma`), so the end of the chunk starting at `s`
//! is the first `e` where the checksum of `[s, e)` equals the 4 bytes at
//! `e`. A running checksum finds it in one pass over the chunk; a false
//! match has a chance of 2^-32 per byte, and the chain must end exactly at
//! the end of the file.
//!
//! Used when CompressionInfo.db's chunk offsets disagree with Data.db (a
//! chunk fails its checksum where the walked chain passes everywhere), and
//! to rebuild a lost CompressionInfo.db ([`rebuild`]): the compressor is
//! the one whose decompression of the first chunk succeeds, the chunk
//! length the size every full chunk decompresses to.

use std::io::Read;

use crate::component::Component;
use crate::compression::{CompressionInfo, Compressor};
use crate::digest::ChecksumAlgo;
use crate::error::{Error, ErrorKind, Result};
use crate::io::ReadKind;
use crate::sstable::Sstable;
use crate::version::Features;

/// Largest compressed chunk looked for, beyond the chunk length: what the
/// compressors add at worst to incompressible input (LZ4's bound is
/// `n + n/255 + 16`, Zstd's and Deflate's smaller for these sizes).
fn max_compressed(chunk_length: u64) -> u64 {
    chunk_length + chunk_length / 255 + 64
}

/// The end of the chunk whose compressed bytes start `b` (the offset of
/// its checksum), or `None` when no prefix of `b` is followed by its
/// checksum.
pub fn chunk_end(b: &[u8], algo: ChecksumAlgo) -> Option<usize> {
    let mut h = algo.hasher();
    for e in 1..b.len().saturating_sub(3) {
        h.update(&b[e - 1..e]);
        let stored = u32::from_be_bytes([b[e], b[e + 1], b[e + 2], b[e + 3]]);
        if h.finish() == stored {
            return Some(e);
        }
    }
    None
}

/// The chunk offsets of the compressed Data.db of `sst`, found by walking
/// it from byte 0 with chunks of at most `chunk_length` uncompressed bytes,
/// when every chunk ends with its checksum and the last one ends the file
/// (`None` otherwise). At most `max_chunks` chunks, and one read of at most
/// a chunk's worst compressed size at a time.
pub fn walk_offsets(
    sst: &Sstable,
    chunk_length: u64,
    max_chunks: usize,
) -> Result<Option<Vec<u64>>> {
    let file_len = sst.io.len(Component::Data)?;
    let algo = ChecksumAlgo::for_chunks(&sst.features());
    let window = max_compressed(chunk_length) + 4;
    let mut offsets = Vec::new();
    let mut at = 0u64;
    while at < file_len {
        if offsets.len() >= max_chunks {
            return Ok(None);
        }
        let len = window.min(file_len - at) as usize;
        let b = sst.io.read(Component::Data, at, len, ReadKind::Scan)?;
        let Some(end) = chunk_end(&b, algo) else {
            return Ok(None);
        };
        offsets.push(at);
        at += end as u64 + 4;
    }
    Ok((at == file_len).then_some(offsets))
}

/// Largest chunk length tried when none is given: the walk reads a window
/// of about this many bytes, so it also bounds the memory a guess costs.
pub const MAX_GUESSED_CHUNK_LENGTH: u32 = 1 << 20;

/// Largest `--chunk-length` accepted: a chunk is decompressed in memory.
pub const MAX_CHUNK_LENGTH: u32 = 16 << 20;

/// The compressors a lost CompressionInfo.db is rebuilt for, in the order
/// they are tried on the first chunk.
const GUESSES: [Compressor; 4] = [
    Compressor::Lz4,
    Compressor::Snappy,
    Compressor::Deflate,
    Compressor::Zstd,
];

/// Where the chunk length of a rebuilt CompressionInfo.db came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChunkLengthSource {
    /// The caller's (`--chunk-length`), and the chunks agree with it.
    Given,
    /// The length every full chunk decompresses to.
    Measured,
    /// Data.db has a single chunk, which any length it fits agrees with:
    /// the version's default (16 KiB from `na`, 64 KiB before), or the
    /// next power of two when the chunk is larger.
    Default,
}

/// A CompressionInfo.db rebuilt by walking Data.db ([`rebuild`]).
#[derive(Debug, Clone)]
pub struct Rebuilt {
    /// The chunk table: compressor, chunk length, uncompressed length and
    /// the offset of every chunk found.
    pub info: CompressionInfo,
    /// How the chunk length was learned.
    pub chunk_length_source: ChunkLengthSource,
    /// Where the chain of chunks stops before the end of Data.db (the file
    /// offset of the first byte that does not start a chunk followed by its
    /// checksum), `None` when it reaches the end.
    pub broken_at: Option<u64>,
    /// Stretches of Data.db between chunks that are no chunk followed by
    /// its checksum (damaged chunks), in file order.
    pub gaps: Vec<Gap>,
    /// Chunks stored uncompressed (`na`+: a payload of one chunk length
    /// that no compressor takes).
    pub raw_chunks: usize,
    /// Data.db's length on disk.
    pub file_len: u64,
}

/// Damaged bytes the walk stepped over to the next chunk it found: they are
/// taken as whole chunks, which fail their checksums when read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Gap {
    /// File offsets of the damaged bytes.
    pub start: u64,
    /// Where the next chunk starts.
    pub end: u64,
    /// The index of the first chunk taken for them.
    pub first_chunk: usize,
    /// How many chunks they are taken for: the fewest that fit them (each
    /// at most a chunk's worst compressed size), so the uncompressed
    /// positions after a gap of several small chunks are too low; scrub's
    /// checks against the partition index catch that.
    pub chunks: usize,
}

/// The uncompressed length of `payload` with compressor `c` when it
/// decompresses, using all of its bytes, to at most `cap` bytes (into
/// `scratch`, at least `cap` long), `None` otherwise.
fn probe(c: &Compressor, payload: &[u8], cap: usize, scratch: &mut [u8]) -> Option<usize> {
    let out = scratch.get_mut(..cap)?;
    match c {
        Compressor::Lz4 => {
            let (len, block) = match payload {
                [a, b, c, d, rest @ ..] => (u32::from_le_bytes([*a, *b, *c, *d]) as usize, rest),
                _ => return None,
            };
            let out = out.get_mut(..len)?;
            let n = lz4_flex::block::decompress_into(block, out).ok()?;
            (n == len).then_some(n)
        }
        Compressor::Snappy => {
            let len = snap::raw::decompress_len(payload).ok()?;
            let out = out.get_mut(..len)?;
            let n = snap::raw::Decoder::new().decompress(payload, out).ok()?;
            (n == len).then_some(n)
        }
        Compressor::Deflate => {
            // The stream must end exactly where the checksum starts.
            let mut d = flate2::read::ZlibDecoder::new(payload);
            let mut n = 0;
            loop {
                let rest = out.get_mut(n..)?;
                if rest.is_empty() {
                    // Full: one more byte means the stream is longer than `cap`.
                    let mut one = [0u8; 1];
                    if d.read(&mut one).ok()? != 0 {
                        return None;
                    }
                    break;
                }
                match d.read(rest).ok()? {
                    0 => break,
                    k => n += k,
                }
            }
            (d.total_in() == payload.len() as u64).then_some(n)
        }
        Compressor::Zstd => zstd::bulk::decompress_to_buffer(payload, out).ok(),
        _ => None,
    }
}

/// The end of the chunk at the start of `b` (the offset of its checksum)
/// whose payload `accept` takes (`Some`), with what it returned: like
/// [`chunk_end`], but a checksum match whose payload does not decompress
/// is a coincidence and the search goes on.
fn accepted_end<T>(
    b: &[u8],
    algo: ChecksumAlgo,
    mut accept: impl FnMut(&[u8]) -> Option<T>,
) -> Option<(usize, T)> {
    let mut h = algo.hasher();
    for e in 1..b.len().saturating_sub(3) {
        h.update(&b[e - 1..e]);
        let stored = u32::from_be_bytes([b[e], b[e + 1], b[e + 2], b[e + 3]]);
        if h.finish() == stored {
            if let Some(t) = accept(&b[..e]) {
                return Some((e, t));
            }
        }
    }
    None
}

/// An error of the walk at file offset `at` of Data.db.
fn walk_error(sst: &Sstable, at: u64, msg: String) -> Error {
    Error::at(
        ErrorKind::BadValue(format!(
            "CompressionInfo.db cannot be rebuilt from Data.db: {msg}"
        )),
        Component::Data,
        at,
        "compressed chunk walk",
    )
    .in_file(&sst.path(Component::Data))
}

/// Rebuild the CompressionInfo.db of `sst`'s compressed Data.db by walking
/// it from byte 0: each chunk ends where the checksum of its bytes follows
/// them and its payload decompresses (LZ4, Snappy, Deflate or Zstd: the
/// first that decompresses the first chunk, then every chunk with it).
/// Every full chunk decompresses to the chunk length, `chunk_length` when
/// given, else measured (see [`ChunkLengthSource`]).
///
/// Damaged bytes inside the file are stepped over to the next chunk found
/// ([`Rebuilt::gaps`]: they become chunks that fail their checksums). When
/// no chunk follows (a file cut inside a chunk), the chunks before are kept
/// and [`Rebuilt::broken_at`] says where; fails when not even the first chunk
/// is found, or the chunks' lengths disagree with `chunk_length` or with
/// each other. Reads one window of at most a chunk's worst compressed size
/// at a time, and holds one chunk decompressed; the offsets are at most one
/// per 5 bytes of Data.db.
pub fn rebuild(sst: &Sstable, chunk_length: Option<u32>) -> Result<Rebuilt> {
    let file_len = sst
        .io
        .len(Component::Data)
        .map_err(|e| e.in_file(&sst.path(Component::Data)))?;
    let features = sst.features();
    let algo = ChecksumAlgo::for_chunks(&features);
    let mut cap = chunk_length.unwrap_or(MAX_GUESSED_CHUNK_LENGTH);
    if cap == 0 || cap > MAX_CHUNK_LENGTH || !cap.is_power_of_two() {
        return Err(walk_error(
            sst,
            0,
            format!("chunk length {cap} is not a power of two up to {MAX_CHUNK_LENGTH}"),
        ));
    }
    let mut scratch = vec![0u8; cap as usize];
    let mut compressor: Option<Compressor> = None;
    let mut offsets = Vec::new();
    let mut lengths: Vec<u32> = Vec::new();
    let mut at = 0u64;
    let mut broken_at = None;
    let mut gaps = Vec::new();
    let mut raw_chunks = 0;
    let mut budget = file_len.saturating_mul(2).saturating_add(1 << 20);
    while at < file_len {
        let window = max_compressed(cap.into()) + 4;
        let len = window.min(file_len - at) as usize;
        let b = sst
            .io
            .read(Component::Data, at, len, ReadKind::Scan)
            .map_err(|e| e.in_file(&sst.path(Component::Data)))?;
        let limit = cap as usize;
        // `na`+ stores a chunk that does not compress well enough as it is:
        // a payload of exactly one chunk length that no compressor takes.
        let raw_len = chunk_length
            .or_else(|| lengths.first().copied().filter(|l| l.is_power_of_two()))
            .filter(|_| features.max_compressed_length && compressor.is_some());
        let found = accepted_end(&b, algo, |payload| match &compressor {
            Some(c) => probe(c, payload, limit, &mut scratch)
                .map(|n| (c.clone(), n, false))
                .or_else(|| {
                    raw_len
                        .filter(|&l| payload.len() == l as usize)
                        .map(|l| (c.clone(), l as usize, true))
                }),
            None => GUESSES.iter().find_map(|c| {
                probe(c, payload, limit, &mut scratch).map(|n| (c.clone(), n, false))
            }),
        });
        let Some((end, (c, n, raw))) = found else {
            // Damage inside a chunk: step over it to the next chunk found,
            // once the compressor and the chunk length are known.
            let l =
                chunk_length.or_else(|| lengths.first().copied().filter(|l| l.is_power_of_two()));
            let step = match (&compressor, l) {
                (Some(c), Some(l)) => {
                    next_chunk(sst, c, l, at, file_len, &mut scratch, &mut budget)?.map(|n| (n, l))
                }
                _ => None,
            };
            let Some((next, l)) = step else {
                broken_at = Some(at);
                break;
            };
            cap = l;
            let gap = next - at;
            let chunks = gap.div_ceil(max_compressed(l.into()) + 4).max(1);
            gaps.push(Gap {
                start: at,
                end: next,
                first_chunk: offsets.len(),
                chunks: chunks as usize,
            });
            for j in 0..chunks {
                offsets.push(at + j * (gap / chunks));
                lengths.push(l);
            }
            at = next;
            continue;
        };
        if compressor.is_none() {
            compressor = Some(c);
        }
        // A second chunk shows the first was full: its length is the chunk
        // length, and windows shrink to it.
        if lengths.len() == 1 && chunk_length.is_none() && lengths[0].is_power_of_two() {
            cap = lengths[0];
        }
        offsets.push(at);
        lengths.push(n as u32);
        raw_chunks += usize::from(raw);
        at += end as u64 + 4;
    }
    let Some(compressor) = compressor else {
        if file_len == 0 {
            let l = chunk_length.unwrap_or_else(|| default_chunk_length(&features));
            return Ok(Rebuilt {
                info: table(Compressor::Lz4, l, &features, 0, offsets),
                chunk_length_source: if chunk_length.is_some() {
                    ChunkLengthSource::Given
                } else {
                    ChunkLengthSource::Default
                },
                broken_at: None,
                gaps,
                raw_chunks,
                file_len,
            });
        }
        return Err(walk_error(
            sst,
            0,
            "no chunk at offset 0 is followed by its checksum and decompresses with LZ4, \
             Snappy, Deflate or Zstd"
                .into(),
        ));
    };
    let (l, source) = chunk_length_of(sst, &lengths, &offsets, chunk_length, &features)?;
    let data_length = lengths.iter().map(|&n| u64::from(n)).sum();
    let mut info = CompressionInfo {
        chunks_end: broken_at,
        ..table(compressor, l, &features, data_length, offsets)
    };
    if raw_chunks > 0 {
        // A payload of a whole chunk length is then one stored as it is
        // (a compressed one that long would have been stored raw).
        info.max_compressed_length = Some(l);
    }
    Ok(Rebuilt {
        info,
        chunk_length_source: source,
        broken_at,
        gaps,
        raw_chunks,
        file_len,
    })
}

/// Candidate chunk starts one search past a damaged chunk decodes at most
/// (each costs a window of a chunk's worst compressed size); all the
/// searches of a walk share a budget of twice Data.db's length, so the walk
/// stays linear in the file whatever its bytes.
const MAX_CANDIDATES: usize = 4096;

/// Whether `b` can start a chunk of `c` that decompresses to `l` bytes
/// (at most `l` when `last`: the last chunk of the file): a cheap look at
/// the compressor's own header before the checksum search (LZ4's length
/// prefix, Snappy's varint length, the zlib header, the zstd magic number).
fn could_start(c: &Compressor, b: &[u8], l: u32, last: bool) -> bool {
    let fits = |n: u64| n == u64::from(l) || (last && n > 0 && n < u64::from(l));
    match (c, b) {
        (Compressor::Lz4, [a, b1, c1, d, ..]) => {
            fits(u32::from_le_bytes([*a, *b1, *c1, *d]).into())
        }
        (Compressor::Snappy, _) => {
            let head = b.get(..b.len().min(5)).unwrap_or(b);
            snap::raw::decompress_len(head).is_ok_and(|n| fits(n as u64))
        }
        (Compressor::Deflate, [cmf, flg, ..]) => {
            *cmf & 0x0f == 8 && (u16::from(*cmf) << 8 | u16::from(*flg)) % 31 == 0
        }
        (Compressor::Zstd, [0x28, 0xb5, 0x2f, 0xfd, ..]) => true,
        _ => false,
    }
}

/// The start of the first chunk after the damaged bytes at `from`: a
/// position whose bytes decompress with `c` to a full chunk of `l` bytes
/// (or less, for the last chunk, which ends the file) and are followed by
/// their checksum. One pass over the rest of Data.db, in bounded reads.
fn next_chunk(
    sst: &Sstable,
    c: &Compressor,
    l: u32,
    from: u64,
    file_len: u64,
    scratch: &mut [u8],
    budget: &mut u64,
) -> Result<Option<u64>> {
    const BLOCK: u64 = 64 << 10;
    let algo = ChecksumAlgo::for_chunks(&sst.features());
    let window = max_compressed(l.into()) + 4;
    let read = |at: u64, len: u64| {
        sst.io
            .read(
                Component::Data,
                at,
                len.min(file_len - at) as usize,
                ReadKind::Scan,
            )
            .map_err(|e| e.in_file(&sst.path(Component::Data)))
    };
    let mut candidates = 0;
    let mut pos = from + 1;
    while pos + 5 <= file_len {
        // Each block overlaps the next by a header's length.
        let b = read(pos, BLOCK + 8)?;
        let starts = (b.len().saturating_sub(5) + 1).min(BLOCK as usize);
        for i in 0..starts {
            // Only the last chunk, which ends the file, may be shorter.
            let last = file_len - (pos + i as u64) <= window;
            if !could_start(c, &b[i..], l, last) {
                continue;
            }
            candidates += 1;
            if candidates > MAX_CANDIDATES || *budget < window {
                return Ok(None);
            }
            *budget -= window;
            let s = pos + i as u64;
            let w = read(s, window)?;
            let ends_file = |end: usize| s + end as u64 + 4 == file_len;
            let found = accepted_end(&w, algo, |payload| {
                probe(c, payload, l as usize, scratch)
                    .filter(|&n| n == l as usize || ends_file(payload.len()))
            });
            if found.is_some() {
                return Ok(Some(s));
            }
        }
        pos += starts as u64;
    }
    Ok(None)
}

/// The version's default chunk length: 16 KiB from `na` (Cassandra 4.0),
/// 64 KiB before.
fn default_chunk_length(f: &Features) -> u32 {
    if f.max_compressed_length {
        16 << 10
    } else {
        64 << 10
    }
}

/// The chunk length the decompressed `lengths` agree with: every chunk but
/// the last non-empty one is full, and only one empty chunk may end the
/// file (some writers add it).
fn chunk_length_of(
    sst: &Sstable,
    lengths: &[u32],
    offsets: &[u64],
    given: Option<u32>,
    f: &Features,
) -> Result<(u32, ChunkLengthSource)> {
    let mut data = lengths.len();
    if data >= 2 && lengths[data - 1] == 0 {
        data -= 1;
    }
    let (l, source) = match given {
        Some(l) => (l, ChunkLengthSource::Given),
        None if data >= 2 => (lengths[0], ChunkLengthSource::Measured),
        None => {
            let n = lengths.first().copied().unwrap_or(0);
            let d = default_chunk_length(f);
            let l = if n <= d {
                d
            } else {
                n.checked_next_power_of_two().unwrap_or(d)
            };
            (l, ChunkLengthSource::Default)
        }
    };
    if !l.is_power_of_two() {
        return Err(walk_error(
            sst,
            offsets.first().copied().unwrap_or(0),
            format!("the first chunk decompresses to {l} bytes, not a power of two"),
        ));
    }
    for (i, (&n, &off)) in lengths.iter().zip(offsets).enumerate() {
        let last = i + 1 >= data;
        let ok = if i >= data {
            n == 0
        } else if last {
            n <= l
        } else {
            n == l
        };
        if !ok {
            let what = if given.is_some() {
                "the given chunk length"
            } else {
                "the chunk length"
            };
            return Err(walk_error(
                sst,
                off,
                format!("chunk {i} decompresses to {n} bytes, {what} is {l}"),
            ));
        }
    }
    Ok((l, source))
}

/// The chunk table of a rebuilt CompressionInfo.db: no options, never a
/// raw chunk (`na`+).
fn table(
    compressor: Compressor,
    chunk_length: u32,
    f: &Features,
    data_length: u64,
    chunk_offsets: Vec<u64>,
) -> CompressionInfo {
    CompressionInfo {
        compressor_class: compressor.name().to_string(),
        compressor,
        options: Vec::new(),
        chunk_length,
        max_compressed_length: f.max_compressed_length.then_some(i32::MAX as u32),
        data_length,
        chunk_offsets,
        chunks_end: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_end_is_where_the_checksum_follows() {
        let chunk = b"some compressed bytes";
        let mut b = chunk.to_vec();
        b.extend_from_slice(&crc32fast::hash(chunk).to_be_bytes());
        b.extend_from_slice(b"next chunk");
        assert_eq!(chunk_end(&b, ChecksumAlgo::Crc32), Some(chunk.len()));
        assert_eq!(chunk_end(&b[..chunk.len() + 3], ChecksumAlgo::Crc32), None);
    }

    fn payloads(data: &[u8]) -> Vec<(Compressor, Vec<u8>)> {
        use std::io::Write;
        let mut lz4 = (data.len() as u32).to_le_bytes().to_vec();
        lz4.extend(lz4_flex::block::compress(data));
        let snappy = snap::raw::Encoder::new().compress_vec(data).unwrap();
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        z.write_all(data).unwrap();
        let deflate = z.finish().unwrap();
        let zstd = zstd::bulk::compress(data, 3).unwrap();
        vec![
            (Compressor::Lz4, lz4),
            (Compressor::Snappy, snappy),
            (Compressor::Deflate, deflate),
            (Compressor::Zstd, zstd),
        ]
    }

    #[test]
    fn each_compressor_is_recognised_by_its_own_payload() {
        let data: Vec<u8> = (0..4096u32).map(|i| (i % 13) as u8).collect();
        let mut scratch = vec![0u8; 4096];
        for (c, p) in payloads(&data) {
            assert_eq!(probe(&c, &p, 4096, &mut scratch), Some(4096), "{c:?}");
            assert_eq!(&scratch[..], &data[..], "{c:?}");
            // Larger than the cap, or with a byte more: not this chunk.
            assert_eq!(probe(&c, &p, 2048, &mut scratch), None, "{c:?}");
            let mut longer = p.clone();
            longer.push(0);
            assert_eq!(probe(&c, &longer, 4096, &mut scratch), None, "{c:?}");
            assert!(could_start(&c, &p, 4096, false), "{c:?}");
            // The first that decompresses is the right one.
            let first = GUESSES
                .iter()
                .find(|g| probe(g, &p, 4096, &mut scratch).is_some());
            assert_eq!(first, Some(&c));
        }
    }
}
