//! `sstkit split SSTABLE... --output-dir DIR (--max-size N | --token-ranges FILE)`:
//! cut an sstable into several, written by [`sstkit_format::write`].
//!
//! ```text
//! sstkit split --output-dir out --max-size 64MiB nb-1-big-Data.db
//! sstkit split --output-dir out --token-ranges ranges.txt /data/ks/t-1234/
//! ```
//!
//! Reads Data.db once, sequentially (partitions in no range are stepped
//! over by their size fields). `--max-size` starts a new sstable between
//! partitions once the current Data.db holds N bytes on disk;
//! `--token-ranges` writes one sstable per range line `START,END` (tokens in
//! (START, END], Cassandra's convention), the first matching range winning.
//! Each output is complete or absent (see `rewrite`).
//!
//! Output per source sstable (json default when stdout is not a terminal,
//! text otherwise): `partitions_read`, `partitions` (written), `left_out`,
//! and `outputs`: per new sstable its `output` (Data.db), `partitions`,
//! `rows`, `data_bytes`, `data_file_bytes`, `bytes`.
//!
//! Exit status as `rewrite`: 0 written; 2 usage; 3 an sstable that cannot
//! be read or written.

use std::io::Write;
use std::path::PathBuf;

use serde_json::json;
use sstkit_format::write::bloom::expected_keys;
use sstkit_format::write::copy::kept_metadata;
use sstkit_format::write::sink::{Route, WriterSink};
use sstkit_format::write::SstableWriter;

use crate::cli::{OutputFormat, SplitArgs};
use crate::plan::select::{self, Spec};
use crate::plan::SstPlan;
use crate::progress::Progress;
use crate::sink::Table;
use crate::writers::{copy, create_error, for_each_source, output_json, BySize, Outputs, Writer};
use crate::{CmdError, CmdResult, Outcome};
use sstkit_format::engine::Selection;

struct ByRange<'a, 't> {
    out: Outputs<'a>,
    table: &'a Table<'t>,
    ranges: Vec<Selection>,
    /// Writer index of each range, once opened.
    slots: Vec<Option<usize>>,
    /// Writer index of the partition being written.
    current: Option<usize>,
}

impl Route for ByRange<'_, '_> {
    fn pick(&mut self, key: &[u8]) -> sstkit_format::Result<bool> {
        self.current = None;
        let Some(i) = self.ranges.iter().position(|r| r.wants(self.table, key)) else {
            return Ok(false);
        };
        let slot = match self.slots[i] {
            Some(s) => s,
            None => {
                let s = self.out.open()?;
                self.slots[i] = Some(s);
                s
            }
        };
        self.current = Some(slot);
        Ok(true)
    }
    fn picked(&mut self) -> Option<&mut SstableWriter> {
        self.out.writers.get_mut(self.current?)
    }
}

fn read_ranges(f: &PathBuf) -> CmdResult<Vec<String>> {
    let text = std::fs::read_to_string(f)
        .map_err(|e| CmdError::from(sstkit_format::Error::from(e).in_file(f)))?;
    let v: Vec<String> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(String::from)
        .collect();
    if v.is_empty() {
        return Err(CmdError::Usage(format!(
            "--token-ranges {}: no range",
            f.display()
        )));
    }
    Ok(v)
}

/// Run the command.
pub fn run(a: &SplitArgs, out: &mut dyn Write) -> CmdResult<Outcome> {
    let w = Writer::parse(&a.writer)?;
    let specs = match &a.token_ranges {
        Some(f) => read_ranges(f)?
            .iter()
            .map(|r| Spec::new(&[], &[], None, &[], Some(r)))
            .collect::<CmdResult<Vec<Spec>>>()?,
        None => Vec::new(),
    };
    if a.max_size == Some(0) {
        return Err(CmdError::Usage("--max-size must be > 0".into()));
    }
    let plan = SstPlan::text_at_terminal(&a.sst)?;
    for_each_source(&plan, &a.output_dir, out, |sst, st, t, emit| {
        let header = t.header;
        let opts = w.options(sst, st)?;
        // Checked up front: a version or chunk length sstkit does not write.
        opts.check().map_err(create_error)?;
        let outputs = Outputs {
            dir: &a.output_dir,
            header,
            kept: kept_metadata(st),
            opts,
            keys: expected_keys(sst, st),
            writers: Vec::new(),
        };
        let mut bar = Progress::new("split");
        let (counts, writers) = match a.max_size {
            Some(max) => {
                let sink = WriterSink::new(BySize {
                    out: outputs,
                    max: Some(max),
                });
                let (c, r) = copy(sst, t, sink, &mut bar)?;
                (c, r.out.writers)
            }
            None => {
                let ranges = specs
                    .iter()
                    .map(|s| select::resolve(s, t))
                    .collect::<CmdResult<Vec<_>>>()?;
                let sink = WriterSink::new(ByRange {
                    slots: vec![None; ranges.len()],
                    current: None,
                    out: outputs,
                    table: t,
                    ranges,
                });
                let (c, r) = copy(sst, t, sink, &mut bar)?;
                (c, r.out.writers)
            }
        };
        let mut written = Vec::new();
        for w in writers {
            written.push(w.finish()?);
        }
        if emit.fmt == OutputFormat::Text {
            let mut s = format!(
                "{} of {} partitions into {} sstables ({} left out)\n",
                counts.written,
                counts.read,
                written.len(),
                counts.read - counts.written
            );
            for w in &written {
                s.push_str(&format!(
                    "  {}: {} partitions, {} rows, {} bytes of data ({} on disk)\n",
                    w.data_path.display(),
                    w.partitions,
                    w.rows,
                    w.data_length,
                    w.data_file_length
                ));
            }
            emit.text(&s)?;
        } else {
            let outs: Vec<_> = written.iter().map(output_json).collect();
            emit.json.object(&json!({
                "partitions_read": counts.read,
                "partitions": counts.written,
                "left_out": counts.read - counts.written,
                "outputs": outs,
            }))?;
        }
        Ok(())
    })
}
