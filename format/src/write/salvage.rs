//! Scrub output as sstables: a [`SalvageSink`] that writes what scrub
//! salvages with [`SstableWriter`]s.
//!
//! * [`Target::Main`] partitions, in order, go to one sstable.
//! * Out-of-order partitions ([`Target::Segregated`]): with `segregate`,
//!   sorted into a separate sstable; with `skip` (scrub option
//!   `keep_out_of_order`), sorted back into the main sstable.
//! * [`Target::Damaged`] (segregate): a third sstable, sorted the same way.
//!
//! Sorting is bounded in memory: out-of-order partitions are first written
//! as they come to a spill sstable in a private work directory; at the end
//! only their keys and positions are sorted, and the spilled partitions are
//! merged into the final sstable by seeking to each one. A spilled key that
//! equals a key already written is left out (reported in
//! [`SalvageOutputs::duplicates`]): two versions of one partition need a
//! merge, not a copy.

use std::cmp::Ordering;
use std::ops::Range;
use std::path::{Path, PathBuf};

use crate::data::{DataPos, Fragment, ScanReader};
use crate::error::{Error, Result};
use crate::index::IndexReader;
use crate::scrub::{FragmentSource, Report, SalvageSink, ScrubInfo, Target};
use crate::statistics::SerializationHeader;
use crate::token::Partitioner;
use crate::{Component, Sstable};

use super::{next_generation, KeptMetadata, SstableWriter, WriterOptions, Written};

/// What a salvage wrote.
#[derive(Debug, Clone, Default)]
pub struct SalvageOutputs {
    /// The main sstable (salvaged partitions, and with `skip` the
    /// out-of-order ones sorted back in).
    pub main: Option<Written>,
    /// `segregate`: the out-of-order partitions, sorted.
    pub segregated: Option<Written>,
    /// `segregate`: partitions over a chunk whose checksum failed, sorted.
    pub damaged: Option<Written>,
    /// Out-of-order partitions left out because a partition with the same
    /// key was written already.
    pub duplicates: u64,
}

/// One output under construction: partitions in order go straight to the
/// writer, the others to a spill writer.
struct Output {
    writer: Option<SstableWriter>,
    spill: Option<SstableWriter>,
    spilled: u64,
}

/// Writes scrub's salvage as sstables. See the module doc.
pub struct SalvageWriter {
    dir: PathBuf,
    work: PathBuf,
    header: SerializationHeader,
    kept: KeptMetadata,
    opts: WriterOptions,
    /// Partitions of the source: the bloom filters are sized for them.
    keys: u64,
    partitioner: Partitioner,
    /// True: out-of-order partitions are sorted into the main sstable.
    sort_into_main: bool,
    main: Output,
    segregated: Option<Output>,
    damaged: Option<Output>,
    /// Last key written to the main writer directly.
    last_main: Option<Vec<u8>>,
    /// The result, once [`SalvageSink::end`] ran.
    pub outputs: SalvageOutputs,
    /// The first error, kept for the caller (the sink API speaks io::Error).
    pub error: Option<Error>,
}

impl std::fmt::Debug for SalvageWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SalvageWriter")
            .field("dir", &self.dir)
            .finish()
    }
}

fn to_io(e: Error) -> std::io::Error {
    std::io::Error::other(e.to_string())
}

impl SalvageWriter {
    /// A sink writing into `dir`: `segregate` keeps out-of-order and
    /// damaged partitions in sstables of their own; otherwise out-of-order
    /// ones are sorted back into the main sstable.
    pub fn new(
        dir: &Path,
        header: &SerializationHeader,
        kept: KeptMetadata,
        opts: WriterOptions,
        partitioner: Partitioner,
        segregate: bool,
        keys: u64,
    ) -> Result<SalvageWriter> {
        let work = dir.join(format!(".sstkit-spill-{}", std::process::id()));
        std::fs::create_dir_all(&work).map_err(|e| super::out::io_err(e, &work))?;
        let mut w = SalvageWriter {
            dir: dir.to_path_buf(),
            work,
            header: header.clone(),
            kept,
            opts,
            keys,
            partitioner,
            sort_into_main: !segregate,
            main: Output {
                writer: None,
                spill: None,
                spilled: 0,
            },
            segregated: None,
            damaged: None,
            last_main: None,
            outputs: SalvageOutputs::default(),
            error: None,
        };
        w.main.writer = Some(w.new_writer(&w.dir.clone())?);
        if segregate {
            w.segregated = Some(Output {
                writer: None,
                spill: None,
                spilled: 0,
            });
            w.damaged = Some(Output {
                writer: None,
                spill: None,
                spilled: 0,
            });
        }
        Ok(w)
    }

    fn new_writer(&self, dir: &Path) -> Result<SstableWriter> {
        let g = next_generation(dir)?;
        let filter = super::bloom::filter_for(
            self.keys,
            self.opts.bloom_filter_fp_chance,
            &self.opts.version.features(),
        );
        SstableWriter::create(
            dir,
            g,
            &self.header,
            self.kept.clone(),
            self.opts.clone(),
            filter,
        )
    }

    fn spill_of(&mut self, target: Target) -> Result<&mut SstableWriter> {
        let work = self.work.clone();
        let needs = {
            let o = self.output(target);
            o.spill.is_none()
        };
        if needs {
            let w = self.new_writer(&work)?;
            self.output(target).spill = Some(w);
        }
        let o = self.output(target);
        o.spilled += 1;
        o.spill.as_mut().ok_or_else(|| {
            Error::new(
                crate::ErrorKind::BadValue("no spill writer".into()),
                "salvage",
            )
        })
    }

    fn output(&mut self, target: Target) -> &mut Output {
        match target {
            Target::Main => &mut self.main,
            Target::Segregated if self.sort_into_main => &mut self.main,
            Target::Segregated => self.segregated.as_mut().unwrap_or(&mut self.main),
            Target::Damaged => self.damaged.as_mut().unwrap_or(&mut self.main),
        }
    }

    fn copy(w: &mut SstableWriter, src: &mut dyn FragmentSource) -> Result<Vec<u8>> {
        let mut key = Vec::new();
        while let Some(f) = src.next_fragment()? {
            if let Fragment::PartitionStart { key: k, .. } = &f {
                key = k.to_vec();
            }
            w.write(&f)?;
        }
        Ok(key)
    }

    fn take_partition(&mut self, target: Target, src: &mut dyn FragmentSource) -> Result<()> {
        if target == Target::Main {
            let Some(w) = self.main.writer.as_mut() else {
                return Err(Error::new(
                    crate::ErrorKind::BadValue("salvage already ended".into()),
                    "salvage",
                ));
            };
            let key = Self::copy(w, src)?;
            self.last_main = Some(key);
            return Ok(());
        }
        let w = self.spill_of(target)?;
        Self::copy(w, src)?;
        Ok(())
    }

    /// Finish an output: without spilled partitions its writer is the
    /// result; otherwise the spill is sorted and merged with what the
    /// writer holds into a new sstable, and both temporaries are removed.
    fn finish_output(&mut self, o: Output) -> Result<Option<Written>> {
        let spill = match o.spill {
            None => {
                return match o.writer {
                    Some(w) if w.partitions() > 0 || o.spilled == 0 => w.finish().map(Some),
                    _ => Ok(None),
                }
            }
            Some(s) => s.finish()?,
        };
        let base = match o.writer {
            Some(w) if w.partitions() > 0 => {
                // Move the in-order part aside: the merged sstable replaces it.
                let written = w.finish()?;
                Some(written)
            }
            _ => None,
        };
        let mut out = self.new_writer(&self.dir.clone())?;
        let spill_sst = Sstable::open_path(&spill.data_path)?;
        let mut keys = index_keys(&spill_sst)?;
        let part = self.partitioner.clone();
        keys.sort_by(|a, b| part.compare_decorated(&a.0, &b.0));
        let mut sr = ScanReader::new(&spill_sst, &self.header)?;
        let mut next = 0usize;
        let mut dups = 0u64;
        let emit_spilled_until = |out: &mut SstableWriter,
                                  sr: &mut ScanReader<'_>,
                                  bound: Option<&[u8]>,
                                  next: &mut usize,
                                  dups: &mut u64|
         -> Result<()> {
            while *next < keys.len() {
                let (k, pos) = &keys[*next];
                let ord = bound.map(|b| part.compare_decorated(k, b));
                if ord == Some(Ordering::Greater) {
                    break;
                }
                if ord == Some(Ordering::Equal) || (*next > 0 && keys[*next - 1].0 == *k) {
                    *dups += 1;
                } else {
                    sr.seek_partition(DataPos(*pos))?;
                    while let Some(f) = sr.next_fragment()? {
                        let end = matches!(f, Fragment::PartitionEnd { .. });
                        out.write(&f)?;
                        if end {
                            break;
                        }
                    }
                }
                *next += 1;
            }
            Ok(())
        };
        if let Some(b) = &base {
            let base_sst = Sstable::open_path(&b.data_path)?;
            let mut br = ScanReader::new(&base_sst, &self.header)?;
            loop {
                let f = match br.next_fragment()? {
                    None => break,
                    Some(f) => f,
                };
                if let Fragment::PartitionStart { key, .. } = &f {
                    // Spilled partitions sorting before this key come first;
                    // one with this very key is a duplicate.
                    let k = key.to_vec();
                    emit_spilled_until(&mut out, &mut sr, Some(&k), &mut next, &mut dups)?;
                }
                out.write(&f)?;
            }
            drop(br);
            for p in &b.files {
                let _ = std::fs::remove_file(p);
            }
        }
        emit_spilled_until(&mut out, &mut sr, None, &mut next, &mut dups)?;
        drop(sr);
        for p in &spill.files {
            let _ = std::fs::remove_file(p);
        }
        self.outputs.duplicates += dups;
        if out.partitions() == 0 {
            return Ok(None);
        }
        out.finish().map(Some)
    }

    /// Drop everything written (an unfinished writer removes its files)
    /// and start the main sstable again: it ends empty, as when nothing is
    /// salvaged.
    fn withdraw_all(&mut self) {
        for o in [
            Some(&mut self.main),
            self.segregated.as_mut(),
            self.damaged.as_mut(),
        ]
        .into_iter()
        .flatten()
        {
            o.writer = None;
            o.spill = None;
            o.spilled = 0;
        }
        self.last_main = None;
        match self.new_writer(&self.dir.clone()) {
            Ok(w) => self.main.writer = Some(w),
            Err(e) => {
                self.error.get_or_insert(e);
            }
        }
    }

    fn finish_all(&mut self) -> Result<()> {
        let main = std::mem::replace(
            &mut self.main,
            Output {
                writer: None,
                spill: None,
                spilled: 0,
            },
        );
        self.outputs.main = self.finish_output(main)?;
        if let Some(o) = self.segregated.take() {
            self.outputs.segregated = self.finish_output(o)?;
        }
        if let Some(o) = self.damaged.take() {
            self.outputs.damaged = self.finish_output(o)?;
        }
        let _ = std::fs::remove_dir(&self.work);
        Ok(())
    }
}

impl Drop for SalvageWriter {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.work);
    }
}

/// (key, Data.db position) of every Index.db entry.
fn index_keys(sst: &Sstable) -> Result<Vec<(Vec<u8>, u64)>> {
    let b = sst.read_component(Component::Index)?;
    let mut r = IndexReader::new(&b, sst.features());
    let mut v = Vec::new();
    while let Some(e) = r.next()? {
        v.push((e.key.to_vec(), e.position));
    }
    Ok(v)
}

impl SalvageSink for SalvageWriter {
    fn begin(&mut self, _info: &ScrubInfo<'_>) -> std::io::Result<()> {
        Ok(())
    }

    fn partition(
        &mut self,
        _info: &ScrubInfo<'_>,
        target: Target,
        src: &mut dyn FragmentSource,
    ) -> std::io::Result<()> {
        let r = self.take_partition(target, src);
        r.map_err(|e| {
            let io = to_io(e.clone());
            self.error.get_or_insert(e);
            io
        })
    }

    fn lost(&mut self, _range: Range<u64>, _keys: &[Vec<u8>]) -> std::io::Result<()> {
        Ok(())
    }

    fn end(&mut self, report: &Report) -> std::io::Result<()> {
        if report.withdrawn > 0 {
            self.withdraw_all();
        }
        let r = self.finish_all();
        r.map_err(|e| {
            let io = to_io(e.clone());
            self.error.get_or_insert(e);
            io
        })
    }
}
