//! `export`'s output flags resolved: `-o FORMAT` and `--output-file FILE`,
//! or the previous release's `-f FORMAT` and `-o FILE`, still read for one
//! release with a note on stderr (`-o` is the output format in every
//! command).

use std::path::PathBuf;

use clap::ValueEnum;

use crate::cli::{ExportArgs, ExportFormat};

impl ExportArgs {
    /// Fill `format` and `output` from the flags: `-o FORMAT` and
    /// `--output-file FILE`, or the spellings of the previous release
    /// (`-f FORMAT`, `-o FILE`), which still work with a note on stderr.
    /// The format defaults to the file's extension.
    pub fn resolve(&mut self) -> Result<(), String> {
        let as_format = |v: &str| ExportFormat::from_str(v, true).ok();
        let mut format = self.format_arg;
        if format.is_some() {
            crate::term::note(
                crate::term::Style::Warn,
                "note: export -f FORMAT is now -o FORMAT, as in every command; -f goes in the next release",
            );
        }
        let mut file = self.output_file.clone();
        if let Some(v) = &self.output_arg {
            match as_format(v) {
                Some(f) if format.is_some_and(|g| g != f) => {
                    return Err(format!("-o {v} and -f name two formats"));
                }
                Some(f) => format = Some(f),
                None if file.is_some() => {
                    return Err(format!(
                        "-o {v}: not an output format (parquet, arrow, csv); the file is --output-file"
                    ));
                }
                None => {
                    crate::term::note(
                        crate::term::Style::Warn,
                        &format!(
                            "note: export -o FILE is now --output-file {v} (-o is the output format, as in every command); -o FILE goes in the next release"
                        ),
                    );
                    file = Some(PathBuf::from(v));
                }
            }
        }
        let Some(file) = file else {
            return Err("export needs --output-file FILE ('-' for stdout)".into());
        };
        let ext = file
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase);
        let from_ext = match ext.as_deref() {
            Some("parquet" | "pq") => Some(ExportFormat::Parquet),
            Some("arrow" | "arrows" | "ipc" | "feather") => Some(ExportFormat::Arrow),
            Some("csv") => Some(ExportFormat::Csv),
            _ => None,
        };
        self.format = format.or(from_ext).ok_or_else(|| {
            format!(
                "say the output format with -o parquet|arrow|csv ({} has no extension that tells)",
                file.display()
            )
        })?;
        self.output = file;
        Ok(())
    }
}
