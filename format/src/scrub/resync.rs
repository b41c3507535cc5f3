//! The resynchronisation machinery of [`scrub`](super::scrub): the cheap
//! test of a candidate partition start ([`Plausible`]) and the scanner that
//! finds and confirms the next partition after damage ([`Scanner`]).

use super::*;

/// The cheap test of a candidate partition start (see the [`scrub`](super) module docs).
pub(super) struct Plausible {
    pub(super) features: Features,
    pub(super) key_type: CqlType,
    pub(super) key_fixed: Option<usize>,
    pub(super) has_static: bool,
    /// Pre-3.0 cell format (`ka`/`la`): atoms follow the header.
    pub(super) legacy: bool,
}

impl Plausible {
    /// True when bytes `b` (up to a candidate) may end with a partition's
    /// end marker: the flags byte `0x01`, or for the legacy format the
    /// two-byte empty cell name (only its last byte is known when `b` has one).
    pub(super) fn ends_partition(&self, b: &[u8]) -> bool {
        match (self.legacy, b) {
            (false, [.., last]) => *last == 0x01,
            (true, [.., x, y]) => *x == 0 && *y == 0,
            (true, [y]) => *y == 0,
            (_, []) => true,
        }
    }

    /// True when `w` (bytes from the candidate on) starts like a partition.
    pub(super) fn check(&self, w: &[u8]) -> bool {
        if w.len() < 4 {
            return false;
        }
        let klen = u16::from_be_bytes([w[0], w[1]]) as usize;
        if klen == 0 || self.key_fixed.is_some_and(|n| n != klen) {
            return false;
        }
        let d = 2 + klen;
        let Some(&first) = w.get(d) else {
            return false;
        };
        let dlen = if self.features.uint_deletion_time {
            if first == 0x80 {
                1
            } else if first & 0x80 != 0 {
                return false;
            } else {
                12
            }
        } else {
            12
        };
        let Some(del) = w.get(d..d + dlen) else {
            return false;
        };
        if !self.features.uint_deletion_time {
            let ldt = i32::from_be_bytes([del[0], del[1], del[2], del[3]]);
            let mfda = i64::from_be_bytes([
                del[4], del[5], del[6], del[7], del[8], del[9], del[10], del[11],
            ]);
            let live = ldt == i32::MAX && mfda == i64::MIN;
            if !live && (ldt < 0 || ldt == i32::MAX || mfda == i64::MIN) {
                return false;
            }
        }
        let f = d + dlen;
        if self.legacy {
            // First atom: a cell name and a known mask, or the end marker
            // of a partition that has a deletion (§11).
            let Some(n) = w.get(f..f + 2) else {
                return false;
            };
            let n = u16::from_be_bytes([n[0], n[1]]) as usize;
            let ok = if n == 0 {
                !(ldt_live(&w[d..]))
            } else {
                w.get(f + 2 + n).is_some_and(|m| *m & !0x57 == 0)
            };
            let key = &w[2..2 + klen];
            return ok && crate::value::decode(&self.key_type, key).is_ok();
        }
        let Some(&flags) = w.get(f) else {
            return false;
        };
        let ok_flags = if flags == 0x01 {
            true
        } else if flags & 0x01 != 0 {
            false
        } else if self.has_static {
            flags & 0x80 != 0 && flags & 0x02 == 0 && w.get(f + 1) == Some(&0x01)
        } else if flags & 0x02 != 0 {
            flags == 0x02
                && w.get(f + 1)
                    .is_some_and(|k| matches!(k, 0 | 1 | 2 | 5 | 6 | 7))
        } else if flags & 0x80 != 0 {
            w.get(f + 1).is_some_and(|e| e & 0x01 == 0 && e & 0x7c == 0)
        } else {
            true
        };
        if !ok_flags {
            return false;
        }
        let key = &w[2..2 + klen];
        crate::value::decode(&self.key_type, key).is_ok()
    }
}

/// True when the 12 bytes at the start of `d` are the legacy LIVE deletion.
pub(super) fn ldt_live(d: &[u8]) -> bool {
    d.get(..12).is_some_and(|b| {
        b[..4] == [0x7f, 0xff, 0xff, 0xff] && b[4..] == [0x80, 0, 0, 0, 0, 0, 0, 0]
    })
}

pub(super) const SEGMENT: u64 = 256 << 10;
/// Keys of the index the bloom filter is checked against before it rejects candidates.
const KNOWN_KEYS: usize = 16;
pub(super) const PEEK: u64 = 65_535 + 2 + 13 + 3;

/// Smallest cost, in bytes, charged to the budget for one confirmation
/// attempt (its setup costs as much as decoding this many bytes).
pub const MIN_ATTEMPT_COST: u64 = 256;

/// The scanner state.
pub(super) struct Scanner<'s> {
    pub(super) header: &'s SerializationHeader,
    pub(super) partitioner: crate::token::Partitioner,
    pub(super) opts: Options,
    pub(super) probe: ScanReader<'s>,
    pub(super) scan: DataSource<'s>,
    pub(super) plausible: Plausible,
    pub(super) chunk_len: Option<u64>,
    /// The partition index's starts (trusted or hints).
    pub(super) starts: Option<Starts<'s>>,
    /// The bloom filter, to reject candidate keys it says are absent; read
    /// at the first candidate, so an intact sstable never holds it.
    pub(super) filter: std::cell::OnceCell<Option<BloomFilter>>,
    pub(super) sst: &'s Sstable,
    /// Uncompressed ranges of chunks that failed their checksum, sorted.
    pub(super) bad: Vec<Range<u64>>,
    /// Every chunk passed its checksum but the whole-file digest failed:
    /// only partitions that agree with a trusted index are salvaged.
    pub(super) guard: bool,
    /// Bytes confirmation decodes may still read.
    pub(super) budget: u64,
    pub(super) attempts: u64,
    pub(super) probe_bytes: u64,
}

impl<'s> Scanner<'s> {
    /// The scanner of `sst`'s Data.db, resynchronising through `starts`,
    /// with the chunks that failed their checksum `bad` (sorted) and on
    /// `guard` when the digest failed.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn open(
        sst: &'s Sstable,
        header: &'s SerializationHeader,
        partitioner: &crate::token::Partitioner,
        opts: &Options,
        chunk_len: Option<u64>,
        starts: Option<Starts<'s>>,
        bad: Vec<Range<u64>>,
        guard: bool,
    ) -> Result<Scanner<'s>> {
        let features = sst.features();
        let probe_opts = ReaderOptions {
            max_unfiltered_size: opts.probe_window,
            ..opts.reader
        };
        let scan = DataSource::open(sst)?;
        let data_len = scan.data_len();
        Ok(Scanner {
            header,
            partitioner: partitioner.clone(),
            opts: *opts,
            probe: ScanReader::with_options(sst, header, probe_opts)?,
            scan,
            plausible: Plausible {
                features,
                key_type: header.partition_key_type.clone(),
                key_fixed: header.partition_key_type.fixed_len(),
                has_static: !header.static_columns.is_empty(),
                legacy: features.legacy_cells,
            },
            chunk_len,
            starts,
            filter: std::cell::OnceCell::new(),
            sst,
            bad,
            guard,
            budget: data_len.saturating_mul(2).saturating_add(1 << 20),
            attempts: 0,
            probe_bytes: 0,
        })
    }

    pub(super) fn chunk_of(&self, pos: u64) -> Option<u64> {
        self.chunk_len.filter(|l| *l > 0).map(|l| pos / l)
    }

    pub(super) fn next_chunk_start(&self, pos: u64) -> Option<u64> {
        self.chunk_len.filter(|l| *l > 0).map(|l| (pos / l + 1) * l)
    }

    /// True when the index is intact enough to resynchronise through it alone.
    pub(super) fn trusted_index(&self) -> bool {
        self.starts.as_ref().is_some_and(|s| s.trusted)
    }

    /// True when Data.db's bytes hold the index's keys at the index's
    /// positions `pos` and `next` (those that are partition starts it
    /// knows, inside Data.db): the index describes this Data.db, so a
    /// partition that disagrees with it was decoded wrong (damaged bytes, or
    /// a serialization header that does not fit), not the index stale.
    pub(super) fn index_holds_bytes(&mut self, pos: u64, next: u64) -> bool {
        let data_len = self.scan.data_len();
        let Some(starts) = self.starts.as_ref() else {
            return false;
        };
        let points: Vec<u64> = [pos, next]
            .into_iter()
            .filter(|&p| p < data_len && starts.is_start(p))
            .collect();
        if points.is_empty() {
            return false;
        }
        points.iter().all(|&p| {
            let key = self
                .scan
                .read_range(DataPos(p), 2)
                .map(|b| u16::from_be_bytes([b[0], b[1]]) as usize)
                .and_then(|n| self.scan.read_range(DataPos(p + 2), n));
            key.is_ok_and(|k| self.starts.as_ref().is_some_and(|s| s.key_agrees(p, &k)))
        })
    }

    /// Stop resynchronising through the index alone: it disagrees with the data.
    pub(super) fn distrust_index(&mut self) {
        if let Some(s) = self.starts.as_mut() {
            s.trusted = false;
        }
    }

    /// The first range of a chunk that failed its checksum and overlaps `r`.
    pub(super) fn bad_overlap(&self, r: &Range<u64>) -> Option<Range<u64>> {
        let i = self.bad.partition_point(|b| b.end <= r.start);
        self.bad
            .get(i)
            .filter(|b| b.start < r.end.max(r.start + 1))
            .cloned()
    }

    /// Decode the candidate at `cand` completely, without reporting; its key
    /// when it decodes cleanly.
    pub(super) fn confirm(&mut self, cand: u64) -> Option<Vec<u8>> {
        self.attempts += 1;
        let mut scratch = Problems::with_max(16);
        let mut checker = DataChecker::new(self.header, self.partitioner.clone(), self.chunk_len);
        let before = self.budget;
        let r = decode_partition(
            &mut self.probe,
            &mut checker,
            cand,
            None,
            &mut scratch,
            &mut self.budget,
            true,
        );
        let spent = (before - self.budget).max(MIN_ATTEMPT_COST);
        self.budget = before.saturating_sub(spent);
        self.probe_bytes += spent;
        match r {
            Ok(d)
                if scratch.count(ProblemClass::PrevSizeMismatch) == 0
                    && scratch.count(ProblemClass::DecodeError) == 0
                    && self.bad_overlap(&(cand..d.end)).is_none() =>
            {
                Some(d.key)
            }
            _ => None,
        }
    }

    /// True when a candidate with key `key` may be a partition of this
    /// sstable after `last` (the last partition accepted).
    pub(super) fn key_fits(&self, key: &[u8], last: Option<&[u8]>) -> bool {
        last.is_none_or(|l| self.partitioner.compare_decorated(l, key) == Ordering::Less)
            && self
                .filter
                .get_or_init(|| {
                    // Filter.db's layout is not self-describing: a few real
                    // files use another version's, which rejects every key.
                    // Only a trusted index's keys are known to be here.
                    let known = self
                        .starts
                        .as_ref()
                        .filter(|s| s.trusted)
                        .map(|s| s.keys_in(&(0..u64::MAX), KNOWN_KEYS))
                        .unwrap_or_default();
                    let known: Vec<&[u8]> = known.iter().map(Vec::as_slice).collect();
                    read_filter(self.sst, &known)
                })
                .as_ref()
                .is_none_or(|f| f.may_contain(key))
    }

    /// Confirm a start the index gives: it decodes, with the key the index
    /// has for it, in order.
    pub(super) fn confirm_start(&mut self, at: u64, last: Option<&[u8]>) -> bool {
        match self.confirm(at) {
            Some(k) => {
                self.starts.as_ref().is_none_or(|s| s.key_agrees(at, &k)) && self.key_fits(&k, last)
            }
            None => false,
        }
    }

    /// The next position after a failure at `pos` (the decode failed, or was
    /// not trusted, at `fail_at`) where a partition decodes; `last` is the
    /// key of the last partition accepted.
    pub(super) fn resync(
        &mut self,
        pos: u64,
        fail_at: u64,
        failure: &Error,
        last: Option<&[u8]>,
    ) -> Option<u64> {
        let data_len = self.scan.data_len();
        let mut q = pos + 1;
        // An unreadable chunk: nothing in it can be decoded.
        if matches!(
            failure.kind,
            ErrorKind::ChecksumMismatch { .. } | ErrorKind::Decompress(_)
        ) || failure.chunk.is_some()
        {
            if let (Some(c), Some(l)) = (failure.chunk, self.chunk_len) {
                q = q.max((c as u64 + 1) * l);
            }
        }
        // A chunk that failed its checksum: no partition overlapping it is
        // salvaged, so the next one starts after it.
        if let Some(b) = self.bad_overlap(&(pos..fail_at.max(pos) + 1)) {
            q = q.max(b.end);
        }
        if self.trusted_index() {
            let mut next = self.starts.as_ref().and_then(|s| s.next_at_or_after(q));
            // None: the index knows no partition after the damage.
            next?;
            // The index's keys are in order: no check against `last`.
            while let Some(h) = next {
                if self.confirm_start(h, None) {
                    return Some(h);
                }
                next = self.starts.as_ref().and_then(|s| s.next_at_or_after(h + 1));
            }
            // On guard (the digest failed), only partitions that agree with
            // the index are salvaged: none is left.
            if self.guard {
                return None;
            }
            // No indexed partition after the damage decodes: the index does
            // not describe this Data.db (a foreign or stale file); scan for
            // a partition instead.
            self.distrust_index();
        }
        let mut attempts = 0u64;
        let mut next_hint = self.starts.as_ref().and_then(|h| h.next_at_or_after(q));
        // The byte before `q`, when it was read: a partition starts right
        // after the previous one's end marker, so any other byte there rules
        // the candidate out (None: unknown, as after an unreadable chunk).
        let mut before: Option<u8> = None;
        while q < data_len {
            let out_of_budget = self.budget == 0 || attempts >= self.opts.max_attempts;
            if out_of_budget {
                // Only index hints from here on.
                while let Some(h) = next_hint {
                    if self.confirm_start(h, last) {
                        return Some(h);
                    }
                    next_hint = self.starts.as_ref().and_then(|x| x.next_at_or_after(h + 1));
                }
                return None;
            }
            if let Some(b) = self.bad_overlap(&(q..q + 1)) {
                q = b.end;
                before = None;
                continue;
            }
            if let Err(e) = self.scan.seek(DataPos(q)) {
                match self.next_chunk_start(q) {
                    Some(n) if e.chunk.is_some() || self.chunk_len.is_some() => {
                        q = n;
                        before = None;
                        continue;
                    }
                    _ => return None,
                }
            }
            let want = (SEGMENT + PEEK).min(data_len - q);
            let filled = self.scan.fill(want);
            let w = self.scan.window();
            if w.is_empty() {
                // The chunk at q is unreadable: go to the next one.
                match (filled, self.next_chunk_start(q)) {
                    (Err(_), Some(n)) => {
                        q = n;
                        before = None;
                        continue;
                    }
                    _ => return None,
                }
            }
            let wl = w.len() as u64;
            let seg_len = if filled.is_ok() {
                wl.clamp(1, SEGMENT)
            } else {
                wl
            };
            // Candidates q..q+seg_len; copy the window (the probe reader and
            // the scan source are independent, but `confirm` needs &mut self).
            let window: Vec<u8> = w.to_vec();
            let mut found = None;
            for i in 0..seg_len {
                let cand = q + i;
                while let Some(h) = next_hint {
                    if h > cand {
                        break;
                    }
                    if h == cand && self.confirm_start(h, last) {
                        return Some(h);
                    }
                    next_hint = self.starts.as_ref().and_then(|x| x.next_at_or_after(h + 1));
                    if h == cand {
                        break;
                    }
                }
                let w = &window[i as usize..];
                let after_end = match i.checked_sub(1) {
                    Some(j) => self.plausible.ends_partition(&window[..=j as usize]),
                    None => before.is_none_or(|b| self.plausible.ends_partition(&[b])),
                };
                if after_end && self.plausible.check(w) {
                    let klen = u16::from_be_bytes([w[0], w[1]]) as usize;
                    if !self.key_fits(&w[2..2 + klen], last) {
                        continue;
                    }
                    attempts += 1;
                    if self.confirm(cand).is_some() {
                        found = Some(cand);
                        break;
                    }
                    if self.budget == 0 || attempts >= self.opts.max_attempts {
                        break;
                    }
                }
            }
            if found.is_some() {
                return found;
            }
            before = window.get(seg_len as usize - 1).copied();
            q += seg_len;
        }
        None
    }
}
