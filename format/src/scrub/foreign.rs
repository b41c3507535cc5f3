//! Whether the serialization header can decode this Data.db: a damaged
//! header, or a Statistics.db copied from another sstable (of the same
//! table, or another whose types happen to decode the bytes), passes every
//! type check yet decodes Data.db with the wrong encoding bases.

use super::*;
use crate::statistics::{MetadataKind, Stats};

/// Why the serialization header of `st` cannot be trusted to decode this
/// Data.db (`None`: no evidence against it): it fails its own checksum
/// (`na`+), Data.db is `disowned` by CompressionInfo.db and the digest, or
/// Statistics.db was written for another sstable. A file
/// describes the sstable it was written with: its partition size histogram
/// counts the partitions of the index (when the index holds Data.db's keys
/// at its positions), and its compression ratio is -1 for an uncompressed
/// Data.db, and for a compressed one its compressed bytes (checksums left
/// out) over its uncompressed length (compared when `intact`: every chunk
/// and the digest pass, so the chunk table and the length are as written).
/// A different ratio is evidence enough (one 8-byte field is rarely
/// damaged alone); a different count only when the STATS component passes
/// its checksum, as the histogram is a large part of the file. A header
/// that is damaged or another sstable's decodes Data.db into data it never
/// held (timestamps and deletion times are stored as deltas from its
/// bases), even where every value fits its type.
pub(super) fn untrusted_header(
    sst: &Sstable,
    st: &Statistics,
    scanner: &mut Scanner<'_>,
    intact: bool,
    disowned: bool,
) -> Option<(ProblemClass, String)> {
    st.header.as_ref()?;
    if disowned {
        return Some((
            ProblemClass::MetadataMismatch,
            "Data.db was not written with this sstable's metadata: its chunks pass their \
             checksums only at the offsets found by walking it, and its digest fails; no \
             partition decoded with the serialization header is salvaged"
                .into(),
        ));
    }
    let of = |k: MetadataKind| st.components.iter().find(|c| c.kind == Some(k));
    if of(MetadataKind::Header).is_some_and(|c| !c.crc_ok()) {
        return Some((
            ProblemClass::CorruptMetadata,
            "the serialization header of Statistics.db fails its checksum; no partition \
             decoded with it is salvaged"
                .into(),
        ));
    }
    let stats = st.stats.as_ref()?;
    let checked = of(MetadataKind::Stats).is_some_and(|c| c.stored_crc.is_some() && c.crc_ok());
    let count = checked
        .then(|| partition_count_mismatch(stats, scanner))
        .flatten();
    let ratio = ratio_mismatch(sst, stats.compression_ratio, intact);
    let why = match (count, ratio) {
        (Some(c), Some(r)) => format!("{c}, and {r}"),
        (Some(w), None) | (None, Some(w)) => w,
        (None, None) => return None,
    };
    Some((
        ProblemClass::MetadataMismatch,
        format!(
            "Statistics.db was written for another sstable: {why}; no partition decoded with \
             its serialization header is salvaged"
        ),
    ))
}

/// How the partition count of `stats` differs from the index's, when the
/// index is trusted and holds Data.db's keys at its positions.
fn partition_count_mismatch(stats: &Stats, scanner: &mut Scanner<'_>) -> Option<String> {
    let counted = (stats.estimated_partition_size.pairs.iter())
        .try_fold(0u64, |a, p| a.checked_add(u64::try_from(p.1).ok()?))?;
    let starts = scanner.starts.as_ref().filter(|s| s.trusted)?;
    let listed = starts.count();
    let middle = starts
        .next_at_or_after(scanner.scan.data_len() / 2)
        .unwrap_or(0);
    if counted == listed || !scanner.index_holds_bytes(0, middle) {
        return None;
    }
    Some(format!(
        "it counts {counted} partitions where the index, which agrees with Data.db, lists {listed}"
    ))
}

/// How the compression ratio `stored` differs from Data.db's; a compressed
/// Data.db's only when `intact`. The writers of `ma` (and pre-3.0
/// versions) stored -1 for compressed sstables too: no evidence there.
fn ratio_mismatch(sst: &Sstable, stored: f64, intact: bool) -> Option<String> {
    // ScyllaDB stores NaN when it recorded no ratio.
    if !stored.is_finite() {
        return None;
    }
    let actual = if sst.data_compressed() {
        if !intact || (stored == -1.0 && sst.version().as_str() == "ma") {
            return None;
        }
        let ci = sst.compression_info().ok()?;
        let on_disk = sst.io.len(Component::Data).ok()?;
        // Each chunk is followed by its 4-byte checksum, which the ratio leaves out.
        let payload = on_disk.checked_sub(4 * ci.chunk_count() as u64)?;
        if ci.data_length == 0 {
            return None;
        }
        payload as f64 / ci.data_length as f64
    } else {
        -1.0
    };
    // Both are one division of the same integers; the margin only absorbs rounding.
    if (stored - actual).abs() <= 1e-9 * actual.abs().max(1.0) {
        return None;
    }
    Some(format!(
        "its compression ratio is {stored}, Data.db's is {actual}"
    ))
}
