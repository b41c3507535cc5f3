//! Compressed chunk boundaries found again by walking Data.db: every
//! compressed chunk is followed by a checksum of its compressed bytes
//! (CRC32, Adler-32 before `ma`), so the end of the chunk starting at `s`
//! is the first `e` where the checksum of `[s, e)` equals the 4 bytes at
//! `e`. A running checksum finds it in one pass over the chunk; a false
//! match has a chance of 2^-32 per byte, and the chain must end exactly at
//! the end of the file.
//!
//! Used when CompressionInfo.db's chunk offsets disagree with Data.db (a
//! chunk fails its checksum where the walked chain passes everywhere).

use crate::component::Component;
use crate::digest::ChecksumAlgo;
use crate::error::Result;
use crate::io::ReadKind;
use crate::sstable::Sstable;

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
}
