//! Whether the serialization header can decode this Data.db: a damaged
//! header, or a Statistics.db copied from another sstable (of the same
//! table, or another whose types happen to decode the bytes), passes every
//! type check yet decodes Data.db with the wrong encoding bases.

use super::typed::Typed;
use super::*;
use crate::statistics::stats::NO_DELETION_TIME;
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
    typed: &Typed,
    scanner: &mut Scanner<'_>,
    intact: bool,
    disowned: bool,
) -> Option<(ProblemClass, String)> {
    if !typed.lost {
        st.header.as_ref()?;
    }
    if let Some(why) = &typed.foreign {
        return Some((ProblemClass::MetadataMismatch, why.clone()));
    }
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
    // Types from --schema that reproduce the stored checksum repair it exactly.
    let repaired = typed.reproduces_checksum || typed.lost;
    if of(MetadataKind::Header).is_some_and(|c| !c.crc_ok()) && !repaired {
        return Some((
            ProblemClass::CorruptMetadata,
            "the serialization header of Statistics.db fails its checksum; no partition \
             decoded with it is salvaged"
                .into(),
        ));
    }
    if let Some(name) = unknown_marshal_type(&typed.header) {
        return Some((
            ProblemClass::CorruptMetadata,
            format!(
                "the serialization header names the class {name}, which Cassandra does not \
                 have: it is damaged; no partition decoded with it is salvaged"
            ),
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

/// Classes of Cassandra's marshal package that a serialization header can
/// name, beyond the native types (`CqlType::parse` knows those).
const MARSHAL_CLASSES: [&str; 12] = [
    "ReversedType",
    "FrozenType",
    "ListType",
    "SetType",
    "MapType",
    "TupleType",
    "CompositeType",
    "UserType",
    "VectorType",
    "DynamicCompositeType",
    "ColumnToCollectionType",
    "PartitionerDefinedOrder",
];

/// The first class named in `header` that is a damaged name: one of
/// Cassandra's marshal package that Cassandra does not have, or one of its
/// classes under another package (a custom type lives in a package of its
/// own, with a name of its own). Cassandra cannot load either; sstkit would
/// take it for an opaque custom type.
fn unknown_marshal_type(header: &SerializationHeader) -> Option<String> {
    const PACKAGE: &str = "org.apache.cassandra.db.marshal";
    let strings = std::iter::once(header.partition_key_type_string.as_str())
        .chain(header.clustering_type_strings.iter().map(String::as_str))
        .chain(
            (header.static_columns.iter())
                .chain(&header.regular_columns)
                .map(|c| c.type_string.as_str()),
        );
    let known = |class: &str| {
        MARSHAL_CLASSES.contains(&class)
            || !matches!(CqlType::parse(class), Ok(CqlType::Custom(_)) | Err(_))
    };
    for s in strings {
        let names = s.split(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '$' | '.')));
        for name in names {
            let Some((package, class)) = name.rsplit_once('.') else {
                continue;
            };
            if (package == PACKAGE) != known(class) {
                return Some(name.to_string());
            }
        }
    }
    None
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

/// Data.db's timestamps against the range Statistics.db records: the check
/// that catches a Statistics.db of another sstable (or with damaged
/// encoding bases) that every other check passes, as in `ma`..`me`, whose
/// metadata has no checksum. A writer records exactly the smallest and
/// largest timestamp it wrote, so a partition decoding to one outside the
/// range was decoded with the wrong base, and when every partition decoded,
/// the extremes must be the recorded ones. Where no checksum covers the
/// recorded range (`ma`..`me`), damage to it alone is taken for a foreign
/// file too: partitions are lost rather than written with timestamps that
/// may be shifted. Local deletion times are checked the same way once every
/// partition decoded (two sstables can share their timestamps exactly).
#[derive(Debug, Clone)]
pub(super) struct Timestamps {
    /// The range Statistics.db records, when it records one that Data.db
    /// is decoded against (see [`Timestamps::new`]).
    recorded: Option<(i64, i64)>,
    /// Data.db's chunks carry checksums that are checked: a partition that
    /// decoded there holds the bytes as written.
    covered: bool,
    /// The smallest and largest timestamp decoded so far.
    seen: Option<(i64, i64)>,
    /// A timestamp stored as a delta from the header's base was decoded.
    deltas: bool,
    /// The first partition decoded from checked bytes to a timestamp outside
    /// the recorded range, and why.
    shifted: Option<(u64, String)>,
    /// The header was lost and its bases are the recorded minimums (see
    /// `Typed::lost`): the scan must confirm them, timestamps and local
    /// deletion times alike, or what was salvaged is withdrawn.
    lost: bool,
    /// The local deletion times Statistics.db records (`NO_DELETION_TIME`
    /// for none; the largest is that whenever anything is live).
    recorded_deletion: (i64, i64),
    /// The smallest and largest local deletion time decoded so far.
    seen_deletion: Option<(i64, i64)>,
    /// A local deletion time stored as a delta from the header's base was decoded.
    deletion_deltas: bool,
}

impl Timestamps {
    /// A check against `st`'s range, for pre-3.0 sstables none (their
    /// timestamps are stored whole, not from the header's base), nor when
    /// the writer saw no timestamp: it stores an empty range (Cassandra) or
    /// the whole `i64` range (ScyllaDB, sstkit), which says nothing.
    pub(super) fn new(st: &Statistics, features: Features, covered: bool, lost: bool) -> Self {
        // A STATS component that fails its checksum records nothing to trust.
        let damaged = (st.components.iter())
            .any(|c| c.kind == Some(MetadataKind::Stats) && c.stored_crc.is_some() && !c.crc_ok());
        let recorded = st
            .stats
            .as_ref()
            .filter(|_| !features.legacy_cells && (st.header.is_some() || lost) && !damaged)
            .map(|s| (s.min_timestamp, s.max_timestamp))
            .filter(|&(min, max)| min <= max && min != i64::MIN && max != i64::MAX);
        let recorded_deletion =
            (st.stats.as_ref()).map_or((NO_DELETION_TIME, NO_DELETION_TIME), |s| {
                (
                    s.min_local_deletion_time.unwrap_or(NO_DELETION_TIME),
                    s.max_local_deletion_time,
                )
            });
        Timestamps {
            recorded,
            covered,
            seen: None,
            deltas: false,
            shifted: None,
            lost,
            recorded_deletion,
            seen_deletion: None,
            deletion_deltas: false,
        }
    }

    /// The same check with nothing decoded yet, for the walk of a later
    /// unit of Data.db ([`Timestamps::join`] adds what it saw).
    pub(super) fn fresh(&self) -> Timestamps {
        Timestamps {
            seen: None,
            deltas: false,
            shifted: None,
            seen_deletion: None,
            deletion_deltas: false,
            ..self.clone()
        }
    }

    /// Go on with what `later`, the check of the partitions after these,
    /// saw: the extremes of both, the first shifted partition.
    pub(super) fn join(&mut self, later: &Timestamps) {
        let widen = |seen: &mut Option<(i64, i64)>, other: Option<(i64, i64)>| {
            if let Some((lo, hi)) = other {
                *seen = Some(seen.map_or((lo, hi), |(a, b)| (a.min(lo), b.max(hi))));
            }
        };
        widen(&mut self.seen, later.seen);
        widen(&mut self.seen_deletion, later.seen_deletion);
        self.deltas |= later.deltas;
        self.deletion_deltas |= later.deletion_deltas;
        if self.shifted.is_none() {
            self.shifted.clone_from(&later.shifted);
        }
    }

    /// Why a partition is not salvaged (`None`: its timestamps stored as
    /// deltas, which span `span`, are within the recorded range). Its
    /// partition deletion, stored whole (`deleted_at`, `deleted_ldt`),
    /// counts towards the extremes only: it decodes right whatever the
    /// header. Its local deletion times stored as deltas span `deletion_span`.
    pub(super) fn partition(
        &mut self,
        (span, deleted_at): (Option<(i64, i64)>, Option<i64>),
        (deletion_span, deleted_ldt): (Option<(i64, i64)>, Option<i64>),
    ) -> Option<String> {
        let widen = |seen: &mut Option<(i64, i64)>, (lo, hi): (i64, i64)| {
            *seen = Some(seen.map_or((lo, hi), |(a, b)| (a.min(lo), b.max(hi))));
        };
        self.deletion_deltas |= deletion_span.is_some();
        for s in [deletion_span, deleted_ldt.map(|t| (t, t))]
            .into_iter()
            .flatten()
        {
            widen(&mut self.seen_deletion, s);
        }
        for s in [span, deleted_at.map(|t| (t, t))].into_iter().flatten() {
            widen(&mut self.seen, s);
        }
        let (lo, hi) = span?;
        self.deltas = true;
        let (min, max) = self.recorded?;
        let at = if lo < min {
            lo
        } else if hi > max {
            hi
        } else {
            return None;
        };
        Some(format!(
            "a timestamp decodes to {at}, outside {min}..={max}, the range Statistics.db records"
        ))
    }

    /// The partition at `pos` decoded outside the recorded range (`why`)
    /// and passes every other check; `vouched`: nothing suggests its bytes
    /// are in the wrong place (not on guard, or it agrees with the index).
    /// In checked bytes, that is the header's doing.
    pub(super) fn indict(&mut self, pos: u64, why: &str, vouched: bool) {
        if self.covered && vouched && self.shifted.is_none() {
            self.shifted = Some((pos, why.to_string()));
        }
    }

    /// Why Statistics.db is not this Data.db's, once the scan is over:
    /// a partition in checked bytes decoded outside the recorded range, or
    /// (`complete`: every byte of Data.db decoded into partitions) the
    /// extremes decoded are not the recorded ones. Without a timestamp
    /// stored as a delta, the header's base decoded nothing: no verdict.
    pub(super) fn verdict(&self, complete: bool) -> Option<String> {
        if let Some((pos, why)) = &self.shifted {
            return Some(format!("in the partition at {pos:#x}, {why}"));
        }
        if self.lost && !complete {
            return Some(
                "the serialization header is lost and not every partition decoded: the \
                 encoding bases taken from Statistics.db's ranges are not confirmed"
                    .into(),
            );
        }
        if let Some(why) = self.deletion_verdict().filter(|_| complete) {
            return Some(why);
        }
        let ((min, max), (lo, hi)) = (self.recorded?, self.seen?);
        (complete && self.deltas && (lo, hi) != (min, max)).then(|| {
            format!(
                "Data.db's timestamps decode to {lo}..={hi}, where Statistics.db records \
                 {min}..={max}"
            )
        })
    }

    /// Why Data.db's local deletion times, all decoded, are not the ones
    /// Statistics.db records, where it records a range Data.db is checked
    /// against (as for timestamps). A header of another sstable, or a lost
    /// one whose bases are the recorded minimums, shifts every value stored
    /// from its base, so the smallest decoded is no longer the smallest
    /// recorded (nor the largest the largest, where it is not "none": the
    /// largest is none whenever anything is live).
    fn deletion_verdict(&self) -> Option<String> {
        self.recorded?;
        // Without a value stored as a delta, the header's base decoded nothing.
        if !self.deletion_deltas {
            return None;
        }
        let (min, max) = self.recorded_deletion;
        let (lo, hi) = self
            .seen_deletion
            .unwrap_or((NO_DELETION_TIME, NO_DELETION_TIME));
        let fits = lo == min && (max == NO_DELETION_TIME || hi == max);
        (!fits).then(|| {
            format!(
                "Data.db's local deletion times decode to {lo}..={hi}, where Statistics.db \
                 records {min}..={max}"
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lost(recorded_deletion: (i64, i64)) -> Timestamps {
        Timestamps {
            recorded: Some((10, 20)),
            covered: true,
            seen: None,
            deltas: false,
            shifted: None,
            lost: true,
            recorded_deletion,
            seen_deletion: None,
            deletion_deltas: false,
        }
    }

    /// The checks of consecutive runs of partitions, joined, are the check
    /// of all of them: extremes, what was stored as a delta, the first
    /// shifted partition.
    #[test]
    fn joined_checks_are_one_check() {
        // A partition's span and deletion: timestamps, then local deletion times.
        type Part = (Option<(i64, i64)>, Option<i64>);
        let parts: [(Part, Part); 5] = [
            ((Some((12, 15)), None), (None, Some(150))),
            ((Some((9, 14)), Some(30)), (Some((120, 130)), None)),
            ((None, None), (None, None)),
            ((Some((11, 25)), None), (Some((90, 100)), None)),
            ((Some((10, 20)), None), (None, None)),
        ];
        let start = lost((100, NO_DELETION_TIME));
        let mut one = start.clone();
        for (i, &(t, d)) in parts.iter().enumerate() {
            if let Some(why) = one.partition(t, d) {
                one.indict(i as u64, &why, true);
            }
        }
        for split in 0..=parts.len() {
            let mut joined = start.clone();
            let mut later = start.fresh();
            for (i, &(t, d)) in parts.iter().enumerate() {
                let check = if i < split { &mut joined } else { &mut later };
                if let Some(why) = check.partition(t, d) {
                    check.indict(i as u64, &why, true);
                }
            }
            joined.join(&later);
            assert_eq!(
                format!("{joined:?}"),
                format!("{one:?}"),
                "split at {split}"
            );
        }
    }

    /// With a lost header the recorded minimum is the base: local deletion
    /// times decoded from a base above the one written all come out higher,
    /// and the smallest no longer meets the recorded one.
    #[test]
    fn a_lost_header_needs_the_recorded_deletion_times() {
        let mut t = lost((100, NO_DELETION_TIME));
        assert_eq!(
            t.partition((Some((10, 20)), None), (Some((100, 300)), None)),
            None
        );
        assert_eq!(t.verdict(true), None);
        assert!(
            t.verdict(false).is_some(),
            "an incomplete scan confirms nothing"
        );

        let mut t = lost((100, NO_DELETION_TIME));
        t.partition((Some((10, 20)), None), (Some((101, 300)), None));
        assert!(t.verdict(true).unwrap().contains("101..=300"));

        // Nothing is live: the largest is recorded too.
        let mut t = lost((100, 300));
        t.partition((Some((10, 20)), None), (Some((100, 301)), None));
        assert!(t.verdict(true).is_some());

        // Deletion times recorded, none stored as a delta: the base decoded
        // nothing, even where a partition deletion (stored whole) differs.
        let mut t = lost((100, NO_DELETION_TIME));
        t.partition((Some((10, 20)), None), (None, Some(150)));
        assert_eq!(t.verdict(true), None);

        // The timestamps still count.
        let mut t = lost((NO_DELETION_TIME, NO_DELETION_TIME));
        t.partition((Some((10, 21)), None), (None, None));
        assert!(t.verdict(true).is_some());

        // With the sstable's own header: the same check on a complete scan only.
        let mut t = lost((100, NO_DELETION_TIME));
        t.lost = false;
        t.partition((Some((10, 20)), None), (Some((90, 300)), None));
        assert!(t.verdict(true).unwrap().contains("90..=300"));
        assert_eq!(t.verdict(false), None);
    }
}
