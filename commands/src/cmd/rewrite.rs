//! `sstkit rewrite SSTABLE... --output-dir DIR`: write each sstable's
//! partitions again, through the writer of [`sstkit_format::write`].
//!
//! ```text
//! sstkit rewrite --output-dir out nb-1-big-Data.db                      # same version and compression
//! sstkit rewrite --output-dir out --exclude-key 42 /data/ks/t-1234/     # drop a poisoned partition
//! sstkit rewrite --output-dir out --format-version nb --compression zstd:5 --chunk-length 64KiB oa-1-big-Data.db
//! sstkit rewrite --output-dir out --format-version da nb-1-big-Data.db  # BIG -> BTI (and back with nb)
//! ```
//!
//! Reads TOC.txt, Statistics.db (the serialization header and the metadata
//! kept), CompressionInfo.db (the source's compression) and Data.db once,
//! sequentially; with key filters the partitions left out are stepped over
//! by their size fields. Writes one sstable per input into DIR with the next
//! free generation; the output is complete (TOC.txt renamed last) or absent.
//!
//! Output per sstable (json default when stdout is not a terminal, text
//! otherwise): `output` (the new Data.db), `files`, `version`,
//! `compression`, `partitions_read`, `partitions`, `rows`, `data_bytes`
//! (uncompressed Data.db), `data_file_bytes`, `bytes` (all components).
//!
//! Writes BIG versions `ma`..`oa` and BTI `da`, either from either (a BTI
//! target gets Partitions.db and Rows.db instead of Index.db and Summary.db).
//!
//! Exit status: 0 every sstable was written; 2 usage (bad flags, an output
//! directory that is an input's, a version sstkit does not write); 3 an
//! sstable that cannot be read or written (its partial output removed).

use std::io::Write;

use serde_json::json;
use sstkit_format::write::bloom::{expected_keys, filter_for};
use sstkit_format::write::copy::kept_metadata;
use sstkit_format::write::sink::{Keep, WriterSink};
use sstkit_format::write::{next_generation, SstableWriter};

use crate::cli::{OutputFormat, RewriteArgs};
use crate::plan::select::{self, Spec};
use crate::plan::SstPlan;
use crate::progress::Progress;
use crate::writers::{copy, for_each_source, Writer};
use crate::{CmdError, CmdResult, Outcome};

/// Run the command.
pub fn run(a: &RewriteArgs, out: &mut dyn Write) -> CmdResult<Outcome> {
    let spec = Spec::from_args(&a.select)?;
    let w = Writer::parse(&a.writer)?;
    let plan = SstPlan::text_at_terminal(&a.sst)?;
    for_each_source(&plan, &a.output_dir, out, |sst, st, t, emit| {
        let header = t.header;
        let sel = select::resolve(&spec, t)?;
        let opts = w.options(sst, st)?;
        let target = opts.version;
        let generation = next_generation(&a.output_dir)?;
        let mut w = SstableWriter::create(
            &a.output_dir,
            generation,
            header,
            kept_metadata(st),
            opts.clone(),
            filter_for(
                expected_keys(sst, st),
                opts.bloom_filter_fp_chance,
                &opts.version.features(),
            ),
        )
        .map_err(|e| match &e.kind {
            sstkit_format::ErrorKind::Unsupported(m) => CmdError::Usage(m.clone()),
            _ => CmdError::from(e),
        })?;
        let mut bar = Progress::new("rewrite");
        // The sink, not the engine, applies the selection: every partition
        // is read (partitions_read counts them all), those left out undecoded.
        let sink = WriterSink::new(Keep::new(&mut w, |k| sel.wants(t, k)));
        let (counts, _) = copy(sst, t, sink, &mut bar)?;
        let written = w.finish()?;
        let files: Vec<String> = written
            .files
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        if emit.fmt == OutputFormat::Text {
            emit.text(&format!(
                    "wrote {} ({} {}): {} of {} partitions, {} rows, {} bytes of data ({} on disk), {} bytes in {} files",
                    written.data_path.display(),
                    target,
                    opts.compression.name(),
                    counts.written,
                    counts.read,
                    written.rows,
                    written.data_length,
                    written.data_file_length,
                    written.total_bytes,
                    files.len()
                ))?;
        } else {
            emit.json.object(&json!({
                "output": written.data_path.display().to_string(),
                "files": files,
                "version": target.as_str(),
                "compression": opts.compression.name(),
                "partitions_read": counts.read,
                "partitions": counts.written,
                "rows": written.rows,
                "data_bytes": written.data_length,
                "data_file_bytes": written.data_file_length,
                "bytes": written.total_bytes,
            }))?;
        }
        Ok(())
    })
}
