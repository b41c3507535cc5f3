//! Which chunks of Data.db scrub can trust: the checksums of an
//! uncompressed Data.db, and chunk offsets found again by walking a
//! compressed one whose CompressionInfo.db disagrees or is lost.

use super::*;

/// Uncompressed ranges of the chunks of an uncompressed Data.db whose
/// CRC.db checksum fails (with a finding each), whether every byte is
/// covered by a checksum that was checked, and whether scrub is on guard:
/// every chunk passed but the whole-file digest did not (a finding).
/// Compressed chunks are checked as they are read.
pub(super) fn bad_chunks(sst: &Sstable, problems: &mut Problems) -> Chunks {
    let compressed = sst.data_compressed();
    if !compressed && !sst.has(Component::Crc) {
        return Chunks {
            covered: digest_vouches(sst),
            ..Chunks::default()
        };
    }
    let mut bad = Vec::new();
    let mut verified = true;
    let (mut chunk_failed, mut digest, mut found) = (false, None, false);
    // Bytes past the chunks CRC.db has checksums for, and whether the
    // whole-file digest is missing or failed (then nothing vouches for them).
    let (mut uncovered, mut unvouched) = (None, false);
    let mut crc_read = true;
    let opts = crate::checksums::ValidateOptions {
        threads: 1,
        ..Default::default()
    };
    let r = crate::checksums::validate_checksums_with(sst, opts, |f| {
        use crate::checksums::ChecksumFinding as F;
        found = true;
        if f.component() == Component::Digest {
            unvouched = true;
        }
        match &f {
            F::DigestMismatch { .. } => {
                unvouched = true;
                digest = Some(f)
            }
            F::CrcCountMismatch {
                stored,
                chunk_size,
                file_len,
                ..
            } => {
                verified = false;
                let covered = stored.saturating_mul(u64::from(*chunk_size));
                uncovered = (covered < *file_len).then_some(covered..*file_len);
            }
            F::BadChunk { .. } | F::TruncatedChunk { .. } | F::ChunksOutOfRange { .. }
                if compressed =>
            {
                // Compressed chunks are checked (and reported) as they are read.
                chunk_failed = true;
            }
            F::BadChunk { .. } | F::TruncatedChunk { .. } | F::ChunksOutOfRange { .. } => {
                chunk_failed = true;
                if let Some(r) = f.uncompressed_range() {
                    bad.push(r);
                    problems.push(Problem::from(f));
                }
            }
            // Chunks without a checksum that could be checked (a damaged or
            // missing Digest leaves the chunks checked).
            F::CorruptMetadata { component, .. } | F::MissingComponent { component }
                if *component == Component::Crc =>
            {
                verified = false;
                crc_read = false;
            }
            _ => {}
        }
    });
    if r.is_err() {
        return Chunks {
            verified: compressed,
            covered: compressed,
            ..Chunks::default()
        };
    }
    let intact = !found;
    let mut walked = false;
    if compressed && chunk_failed {
        walked = walked_offsets(sst, problems);
        chunk_failed = !walked;
    }
    // Every chunk passed but the digest failed: chunks in the wrong place
    // (swapped), which their own checksums cannot show.
    let guard = digest.is_some() && !chunk_failed;
    if let Some(f) = digest.filter(|_| guard) {
        verified = false;
        problems.push(Problem::from(f));
    }
    // CRC.db covers less than Data.db holds and the digest does not vouch
    // for the rest (Data.db replaced or extended): the rest is not salvaged.
    if let Some(r) = uncovered.filter(|_| unvouched) {
        problems.push(Problem::new(
            ProblemClass::CrcCountMismatch,
            Component::Data,
            r.start,
            format!(
                "bytes {:#x}..{:#x} of Data.db have no checksum in CRC.db and the digest does \
                 not vouch for them: no partition over them is salvaged",
                r.start, r.end
            ),
        ));
        bad.push(r);
    }
    bad.sort_unstable_by_key(|r| r.start);
    Chunks {
        bad,
        verified,
        guard,
        intact,
        // Only walking finds the chunks and the digest fails: Data.db is not
        // the file CompressionInfo.db and the digest were written for.
        disowned: walked && guard,
        covered: compressed || crc_read,
    }
}

/// Whether the whole-file digest of an uncompressed Data.db without CRC.db
/// matches: then every byte is as written, though no chunk can be told bad.
fn digest_vouches(sst: &Sstable) -> bool {
    if !sst.has(Component::Digest) {
        return false;
    }
    let opts = crate::checksums::ValidateOptions {
        threads: 1,
        ..Default::default()
    };
    let mut mismatch = false;
    let r = crate::checksums::validate_checksums_with(sst, opts, |f| {
        if f.component() == Component::Digest || f.is_error() {
            mismatch = true;
        }
    });
    r.is_ok_and(|r| r.has_digest && !mismatch)
}

/// What the checksums of Data.db say (see [`bad_chunks`]).
#[derive(Default)]
pub(super) struct Chunks {
    /// Uncompressed ranges of the chunks that failed (uncompressed Data.db).
    pub(super) bad: Vec<Range<u64>>,
    /// Every byte is covered by a checksum that is checked.
    pub(super) verified: bool,
    /// Every chunk passed but the whole-file digest did not.
    pub(super) guard: bool,
    /// Every chunk and the digest were checked and nothing was found: the
    /// chunk table and Data.db's length are this Data.db's, as written.
    pub(super) intact: bool,
    /// Every chunk passes only at the offsets found by walking Data.db, and
    /// the whole-file digest fails: another sstable's Data.db.
    pub(super) disowned: bool,
    /// Data.db's chunks carry checksums that are checked (compressed, or
    /// CRC.db is readable): what decodes outside `bad` is as written.
    pub(super) covered: bool,
}

/// When compressed chunks fail their checksums where walking Data.db finds
/// a chain of chunks that all pass and end the file, as many as
/// CompressionInfo.db counts: its offsets are damaged, and the walked ones
/// are used (with a finding). True when they are.
pub(super) fn walked_offsets(sst: &Sstable, problems: &mut Problems) -> bool {
    let Ok(b) = sst.read_component(Component::CompressionInfo) else {
        return false;
    };
    let Ok(mut ci) = crate::compression::CompressionInfo::parse(&b, &sst.features()) else {
        return false;
    };
    let walked = crate::chunk_walk::walk_offsets(sst, ci.chunk_length.into(), ci.chunk_count());
    let Ok(Some(offsets)) = walked else {
        return false;
    };
    if offsets.len() != ci.chunk_count() || offsets == ci.chunk_offsets {
        return false;
    }
    let first = offsets
        .iter()
        .zip(&ci.chunk_offsets)
        .position(|(a, b)| a != b);
    let i = first.unwrap_or(0);
    let msg = format!(
        "chunk offsets disagree with Data.db: chunk {i} is stored at {}, its bytes and \
         checksum are at {}; the offsets found by walking Data.db are used",
        ci.chunk_offsets[i], offsets[i]
    );
    ci.chunk_offsets = offsets;
    sst.use_compression_info(ci);
    problems.push(Problem::new(
        ProblemClass::CorruptMetadata,
        Component::CompressionInfo,
        0,
        msg,
    ));
    true
}

/// The findings of a CompressionInfo.db rebuilt by walking Data.db: what
/// was rebuilt, and the end of Data.db that no chunk covers.
pub(super) fn rebuilt_problems(
    sst: &Sstable,
    r: &crate::chunk_walk::Rebuilt,
    problems: &mut Problems,
) {
    use crate::chunk_walk::ChunkLengthSource as S;
    let ci = &r.info;
    let (class, why) = if sst.io.exists(Component::CompressionInfo) {
        (ProblemClass::CorruptMetadata, "does not decode")
    } else if sst.toc.has(Component::CompressionInfo) {
        (ProblemClass::MissingComponent, "is missing")
    } else {
        (
            ProblemClass::MissingComponent,
            "is neither in TOC.txt nor beside Data.db, nor is CRC.db, but Data.db is a chain of \
             compressed chunks each followed by its checksum",
        )
    };
    let length = match r.chunk_length_source {
        S::Given => "as given",
        S::Measured => "what every full chunk decompresses to",
        S::Default => "the version's default: Data.db has one chunk",
    };
    problems.push(Problem::new(
        class,
        Component::CompressionInfo,
        0,
        format!(
            "CompressionInfo.db {why}: rebuilt from Data.db by walking its chunk checksums: {} \
             chunks{}, compressor {}, chunk length {} ({length}), {} bytes uncompressed",
            ci.chunk_count(),
            match r.raw_chunks {
                0 => String::new(),
                n => format!(" ({n} stored uncompressed)"),
            },
            ci.compressor.name(),
            ci.chunk_length,
            ci.data_length
        ),
    ));
    for g in &r.gaps {
        let from = ci.chunk_start(g.first_chunk);
        let to = ci.chunk_start(g.first_chunk + g.chunks);
        problems.push(
            Problem::new(
                ProblemClass::DataLost,
                Component::Data,
                from,
                format!(
                    "Data.db bytes {}..{} on disk are not a chunk followed by its checksum \
                     (a damaged chunk): taken as {} chunk(s) of uncompressed bytes \
                     {from:#x}..{to:#x}, which cannot be read; the walk goes on at the next \
                     chunk found",
                    g.start, g.end, g.chunks
                ),
            )
            .chunk(Some(g.first_chunk as u64)),
        );
    }
    if let Some(at) = r.broken_at {
        problems.push(Problem::new(
            ProblemClass::DataLost,
            Component::Data,
            ci.data_length,
            format!(
                "Data.db bytes {at}..{} on disk are not a chunk followed by its checksum (a file \
                 cut inside a chunk, or a damaged chunk): what they hold after uncompressed \
                 offset {:#x} cannot be read",
                r.file_len, ci.data_length
            ),
        ));
    }
}
