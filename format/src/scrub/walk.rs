//! The loop of [`scrub`](super::scrub) over Data.db's partitions: decode,
//! judge, check the order, and on a loss resynchronise.
//!
//! One [`Walk`] reads the whole file on one thread. With several threads
//! ([`super::parallel`], mode `validate`) each unit of partitions gets a
//! walk of its own that stops, without judging it further, at the first
//! partition it cannot settle alone (one that does not decode, that
//! [`judge`] does not pass, or that changes what the walk knows of the
//! index): the calling thread takes that partition over ([`Walk::join`])
//! and goes on as one thread does.

use super::*;

/// What every walk over one sstable reads with.
pub(super) struct Ctx<'c> {
    pub(super) header: &'c SerializationHeader,
    pub(super) partitioner: &'c crate::token::Partitioner,
    pub(super) chunk_len: Option<u64>,
    pub(super) opts: &'c Options,
    pub(super) info: &'c ScrubInfo<'c>,
    /// Every byte of Data.db is covered by a checksum that was checked,
    /// and the whole-file digest (when there is one) matched.
    pub(super) verified: bool,
    /// The serialization header cannot be trusted (see the `foreign` module).
    pub(super) untrusted: bool,
    /// Mode skip or segregate: partitions go through the look-ahead queue.
    pub(super) writing: bool,
}

/// A partition lost: the error, where decoding failed, its key when known,
/// and whether the error is reported (a partition over a chunk that failed
/// its checksum has a finding of its own).
type Loss = (Error, u64, Option<Vec<u8>>, bool);

/// What a unit's walk leaves to the calling thread (see [`Walk::join`]).
pub(super) struct UnitEnd {
    /// The first partition it settled: its key, offset, and how many
    /// problems were found before its order was checked (where its order
    /// problem goes: it depends on the partition before the unit).
    first: Option<(Vec<u8>, u64, u64)>,
    /// The partition it stopped at, decoded (its decoding's findings and
    /// counts are the unit's) but neither judged nor settled.
    pending: Option<(u64, std::result::Result<Decoded, Failed>)>,
}

/// The state of the loop over Data.db's partitions.
pub(super) struct Walk<'s> {
    pub(super) reader: ScanReader<'s>,
    pub(super) scanner: Scanner<'s>,
    pub(super) checker: DataChecker,
    pub(super) stamps: Timestamps,
    pub(super) report: Report,
    /// Decoded partitions whose order is not decided yet (`writing`).
    pub(super) queue: VecDeque<(u64, Decoded)>,
    /// The key of the last partition decoded in order (candidates must
    /// sort after it). A unit's walk leaves out its first partition's.
    pub(super) last_key: Option<Vec<u8>>,
    /// Where the next partition starts.
    pub(super) pos: u64,
    /// The loop is over (the end of the data, an abort, or no partition
    /// to resynchronise at).
    pub(super) stopped: bool,
    /// A unit's walk (`Some`): what it leaves to the calling thread.
    pub(super) unit: Option<UnitEnd>,
}

impl<'s> Walk<'s> {
    /// A walk from `pos`, with nothing decoded yet.
    pub(super) fn new(
        cx: &Ctx<'_>,
        reader: ScanReader<'s>,
        scanner: Scanner<'s>,
        stamps: Timestamps,
        report: Report,
        pos: u64,
    ) -> Self {
        Walk {
            reader,
            scanner,
            checker: DataChecker::new(cx.header, cx.partitioner.clone(), cx.chunk_len),
            stamps,
            report,
            queue: VecDeque::new(),
            last_key: None,
            pos,
            stopped: false,
            unit: None,
        }
    }

    /// Walk partitions while they start before `end` (and Data.db's end).
    pub(super) fn run_until(
        &mut self,
        cx: &Ctx<'_>,
        sink: &mut Option<&mut dyn SalvageSink>,
        end: u64,
        progress: &mut dyn FnMut(u64, u64),
    ) -> Result<()> {
        let data_len = self.reader.data_len();
        while !self.stopped && self.pos < end.min(data_len) {
            let pos = self.pos;
            progress(pos, data_len);
            let before = self.report.problems.total();
            let decoded = decode_partition(
                &mut self.reader,
                &mut self.checker,
                pos,
                None,
                &mut self.report.problems,
                &mut u64::MAX.clone(),
                false,
            );
            if self.unit.is_some() {
                self.unit_step(cx, pos, decoded)?;
                continue;
            }
            self.settle_decoded(cx, sink, pos, decoded)?;
            if cx.opts.mode == Mode::Abort && self.report.problems.total() > before {
                self.report.aborted = true;
                self.stopped = true;
            }
        }
        if self.pos >= data_len {
            self.stopped = true;
        }
        Ok(())
    }

    /// A unit's walk settles a partition only when one thread would settle
    /// it whatever came before: it decoded, [`judge`] passes it, and the
    /// index is trusted as before. Otherwise it stops there, the partition
    /// pending, its timestamps not counted.
    fn unit_step(
        &mut self,
        cx: &Ctx<'_>,
        pos: u64,
        decoded: std::result::Result<Decoded, Failed>,
    ) -> Result<()> {
        let passed = match &decoded {
            Ok(d) => {
                let (stamps, trusted) = (self.stamps.clone(), self.scanner.trusted_index());
                let judged = judge(
                    &mut self.scanner,
                    &mut self.stamps,
                    cx.verified,
                    pos,
                    d,
                    cx.header,
                    cx.untrusted,
                );
                let passed = judged.is_none() && self.scanner.trusted_index() == trusted;
                if !passed {
                    self.stamps = stamps;
                }
                passed
            }
            Err(_) => false,
        };
        match decoded {
            Ok(d) if passed => self.settle_judged(cx, &mut None, pos, d, None).map(drop),
            _ => {
                if let Some(u) = self.unit.as_mut() {
                    u.pending = Some((pos, decoded));
                }
                self.stopped = true;
                Ok(())
            }
        }
    }

    /// Judge the partition decoded at `pos` (or failed there), settle it,
    /// and resynchronise after it when it is lost.
    fn settle_decoded(
        &mut self,
        cx: &Ctx<'_>,
        sink: &mut Option<&mut dyn SalvageSink>,
        pos: u64,
        decoded: std::result::Result<Decoded, Failed>,
    ) -> Result<()> {
        let loss = match decoded {
            Ok(d) => {
                let judged = judge(
                    &mut self.scanner,
                    &mut self.stamps,
                    cx.verified,
                    pos,
                    &d,
                    cx.header,
                    cx.untrusted,
                );
                self.settle_judged(cx, sink, pos, d, judged)?
            }
            Err(f) => {
                let off = f.error.offset.unwrap_or(pos);
                Some((*f.error, off, f.key, true))
            }
        };
        match loss {
            Some(loss) => self.lose(cx, sink, pos, loss),
            None => Ok(()),
        }
    }

    /// The partition `d` decoded at `pos`, judged: salvaged (queued when
    /// writing), or lost (returned).
    fn settle_judged(
        &mut self,
        cx: &Ctx<'_>,
        sink: &mut Option<&mut dyn SalvageSink>,
        pos: u64,
        d: Decoded,
        judged: Option<Judged>,
    ) -> Result<Option<Loss>> {
        let opts = cx.opts;
        let data_len = self.reader.data_len();
        match judged {
            Some(Judged::Damaged(b)) => {
                self.report.damaged += 1;
                let chunk = self.scanner.chunk_of(b.start);
                let action = match opts.mode {
                    Mode::Segregate => "written to the damaged output",
                    Mode::Skip => "not salvaged",
                    _ => "cannot be trusted",
                };
                let p = Problem::new(
                    ProblemClass::Checksum,
                    Component::Data,
                    pos,
                    format!(
                        "partition {pos:#x}..{:#x} overlaps bytes {:#x}..{:#x}, whose chunk \
                         checksum failed: {action}",
                        d.end, b.start, b.end
                    ),
                )
                .chunk(chunk)
                .key(&d.key);
                self.report.problems.push(p);
                if let (Mode::Segregate, Some(s)) = (opts.mode, sink.as_deref_mut()) {
                    hand_over(&mut self.reader, s, cx.info, Target::Damaged, pos, &d)?;
                }
                let error = Error::at(
                    ErrorKind::BadValue("chunk checksum failed".into()),
                    Component::Data,
                    b.start,
                    "partition",
                );
                Ok(Some((error, d.end.saturating_sub(1), Some(d.key), false)))
            }
            Some(Judged::Mismatch(msg)) => {
                let error = Error::at(ErrorKind::BadValue(msg), Component::Data, pos, "partition");
                Ok(Some((error, pos, Some(d.key), true)))
            }
            None => {
                let next = d.end;
                let key = self.reader.is_legacy().then(|| d.key.clone());
                let ord = self.checker.order_of(&d.key);
                match self.unit.as_mut() {
                    // A unit's first partition: its order is the calling thread's to check.
                    Some(u) if u.first.is_none() => {
                        u.first = Some((d.key.clone(), pos, self.report.problems.total()));
                    }
                    _ if ord.is_none_or(|o| o == Ordering::Less) => {
                        self.last_key = Some(d.key.clone());
                    }
                    _ => {}
                }
                if cx.writing {
                    self.queue.push_back((pos, d));
                    while self.queue.len() > LOOKAHEAD {
                        settle(
                            &mut self.queue,
                            &mut self.checker,
                            &mut self.reader,
                            sink,
                            cx.info,
                            opts,
                            &self.scanner,
                            &mut self.report,
                        )?;
                    }
                } else {
                    if !matches!(ord, None | Some(Ordering::Less)) {
                        let p = order_problem(pos, &d.key, ord, false, opts, &self.scanner);
                        self.report.problems.push(p);
                    }
                    self.checker.set_last_key(&d.key);
                    self.report.salvaged += 1;
                    self.report.salvaged_rows += d.rows;
                }
                self.pos = next;
                // CASSANDRA-10791: atoms between this partition's end marker
                // and the next indexed partition belong to this partition
                // (C\* 2.1 `Scrubber`; needs Index.db, as there).
                let frag_end = match (&key, &self.scanner.starts) {
                    (Some(_), Some(h)) => Some(h.next_at_or_after(next).unwrap_or(data_len)),
                    _ => None,
                };
                if let (Some(k), Some(fend)) = (key, frag_end.filter(|e| *e > next)) {
                    let mut scratch = Problems::with_max(16);
                    let mut fchecker =
                        DataChecker::new(cx.header, cx.partitioner.clone(), cx.chunk_len);
                    if let Ok(fd) = decode_partition(
                        &mut self.reader,
                        &mut fchecker,
                        next,
                        Some((&k, fend)),
                        &mut scratch,
                        &mut u64::MAX.clone(),
                        false,
                    ) {
                        if cx.writing {
                            self.queue.push_back((next, fd));
                        } else {
                            let p = fragment_problem(next, fend, &k, opts, &self.scanner);
                            self.report.problems.push(p);
                        }
                        self.pos = fend;
                    }
                }
                Ok(None)
            }
        }
    }

    /// The partition at `pos` is lost: report it and the bytes skipped,
    /// and resynchronise after it (or stop: abort, or nothing after it).
    fn lose(
        &mut self,
        cx: &Ctx<'_>,
        sink: &mut Option<&mut dyn SalvageSink>,
        pos: u64,
        (error, fail_at, key, report_error): Loss,
    ) -> Result<()> {
        let (opts, report, scanner) = (cx.opts, &mut self.report, &mut self.scanner);
        let data_len = self.reader.data_len();
        if report_error {
            let mut p = Problem::from_error(&error, Component::Data, fail_at);
            if p.chunk.is_none() {
                p.chunk = scanner.chunk_of(fail_at);
            }
            if let Some(k) = &key {
                p = p.key(k);
            }
            report.problems.push(p);
        }
        if opts.mode == Mode::Abort {
            report.aborted = true;
            self.stopped = true;
            return Ok(());
        }
        report.resyncs += 1;
        let next = scanner.resync(pos, fail_at, &error, self.last_key.as_deref());
        let end = next.unwrap_or(data_len);
        let range = pos..end;
        let mut keys: Vec<Vec<u8>> = key.iter().cloned().collect();
        if let Some(h) = &scanner.starts {
            for k in h.keys_in(&range, 1000) {
                if !keys.contains(&k) {
                    keys.push(k);
                }
            }
        }
        let mut lost = Problem::new(
            ProblemClass::DataLost,
            Component::Data,
            pos,
            format!(
                "{} bytes of Data.db {} ({} partition key(s) known){}",
                end - pos,
                if cx.writing {
                    "skipped"
                } else {
                    "cannot be read"
                },
                keys.len(),
                if next.is_some() {
                    format!("; resynchronised at {end:#x}")
                } else {
                    "; no decodable partition after it".into()
                }
            ),
        )
        .chunk(scanner.chunk_of(pos));
        lost.end = Some(end);
        if let Some(k) = keys.first() {
            lost.partition_key = Some(k.clone());
        }
        lost.lost_keys = keys.iter().skip(1).cloned().collect();
        report.problems.push(lost);
        let indexed = scanner.starts.as_ref().map_or(0, |h| h.count_in(&range));
        report.lost_partitions += indexed.max(keys.len() as u64);
        report.lose_keys(&keys);
        report.lost_bytes += end - pos;
        report.lost_ranges.push(range.clone());
        if let Some(s) = sink.as_deref_mut() {
            s.lost(range, &keys).map_err(Error::from)?;
        }
        match next {
            Some(n) => self.pos = n,
            None => self.stopped = true,
        }
        Ok(())
    }

    /// Decide the partitions left in the look-ahead queue (`writing`).
    pub(super) fn drain(
        &mut self,
        cx: &Ctx<'_>,
        sink: &mut Option<&mut dyn SalvageSink>,
    ) -> Result<()> {
        while !self.queue.is_empty() {
            settle(
                &mut self.queue,
                &mut self.checker,
                &mut self.reader,
                sink,
                cx.info,
                cx.opts,
                &self.scanner,
                &mut self.report,
            )?;
        }
        Ok(())
    }

    /// A walk of a unit of Data.db starting at `pos` (see [`Walk::join`]).
    pub(super) fn for_unit(mut self) -> Self {
        self.unit = Some(UnitEnd {
            first: None,
            pending: None,
        });
        self
    }

    /// True when the walk of a unit starting at `start` goes on from here
    /// as this walk would: this walk is there, at a partition boundary,
    /// with nothing queued.
    pub(super) fn continues_at(&self, start: u64) -> bool {
        !self.stopped && self.pos == start && self.queue.is_empty()
    }

    /// Go on with what `later` (the walk of the next unit, started where
    /// this one is: [`Walk::continues_at`]) found: its problems after this
    /// walk's, with the order of its first partition after this walk's
    /// last checked here, its counts, keys and timestamps; then settle the
    /// partition it stopped at, as one thread does.
    pub(super) fn join(&mut self, cx: &Ctx<'_>, later: Joined) -> Result<()> {
        let mut list = later.problems;
        if let Some((key, pos, at)) = later.end.first {
            let ord = self.checker.order_of(&key);
            if matches!(ord, None | Some(Ordering::Less)) {
                self.last_key = Some(key);
            } else {
                let p = order_problem(pos, &key, ord, false, cx.opts, &self.scanner);
                let at = usize::try_from(at)
                    .unwrap_or(usize::MAX)
                    .min(list.list.len());
                list.list.insert(at, p);
                *list.counts.entry(ProblemClass::PartitionOrder).or_insert(0) += 1;
            }
        }
        if later.last_key.is_some() {
            self.last_key = later.last_key;
        }
        self.report.problems.append(list);
        self.checker.follow(&later.checker);
        self.stamps.join(&later.stamps);
        self.report.salvaged += later.salvaged;
        self.report.salvaged_rows += later.salvaged_rows;
        self.report.threaded_units += 1;
        self.pos = later.pos;
        match later.end.pending {
            Some((pos, decoded)) => self.settle_decoded(cx, &mut None, pos, decoded),
            None => Ok(()),
        }
    }

    /// What this unit's walk found, without its readers (handed to the
    /// calling thread).
    pub(super) fn finish_unit(self) -> Option<Joined> {
        Some(Joined {
            end: self.unit?,
            problems: self.report.problems,
            checker: self.checker,
            stamps: self.stamps,
            last_key: self.last_key,
            salvaged: self.report.salvaged,
            salvaged_rows: self.report.salvaged_rows,
            pos: self.pos,
        })
    }
}

/// A unit's walk, as joined to the walk before it ([`Walk::join`]).
pub(super) struct Joined {
    end: UnitEnd,
    problems: Problems,
    checker: DataChecker,
    stamps: Timestamps,
    last_key: Option<Vec<u8>>,
    salvaged: u64,
    salvaged_rows: u64,
    /// Where it stopped: the next partition, or the pending one.
    pos: u64,
}
