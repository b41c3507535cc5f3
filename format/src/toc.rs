//! `TOC.txt`: the list of an sstable's components.
//!
//! ```text
//! Data.db\n
//! Index.db\n
//! ...            one component suffix per line, UTF-8, any order
//! ```
//!
//! Source: Cassandra `o.a.c/io/sstable/format/TOCComponent.java`
//! (`loadTOC`), Scylla `sstables/sstables.cc` (`read_toc`). Blank lines are
//! ignored; an empty TOC, a line that is not valid UTF-8 or a truncated last
//! line that names no known component are reported as errors by
//! [`Toc::parse`] — Scylla refuses such TOCs too (`broken_sstable_test.cc`
//! `empty_toc`, `truncated_toc`).

use crate::component::Component;
use crate::cur::Cur;
use crate::error::Result;

/// One TOC line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TocEntry {
    /// The suffix as written, e.g. `Digest.crc32` or `SI_idx.db`.
    pub name: String,
    /// The component, when it is one sstkit knows.
    pub component: Option<Component>,
}

/// A parsed TOC.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Toc {
    /// Entries in file order.
    pub entries: Vec<TocEntry>,
}

impl Toc {
    /// Parse TOC.txt bytes.
    pub fn parse(bytes: &[u8]) -> Result<Toc> {
        let cur = Cur::new(bytes, Component::Toc, 0);
        let text = std::str::from_utf8(bytes)
            .map_err(|e| cur.bad("TOC text", format!("not UTF-8 at byte {}", e.valid_up_to())))?;
        let mut entries = Vec::new();
        let mut offset = 0u64;
        let lines = text.split('\n').count();
        for (i, line) in text.split('\n').enumerate() {
            let name = line.trim_end_matches('\r').trim();
            if !name.is_empty() {
                let component = Component::from_suffix(name);
                // A last line without its newline that names no component
                // is a name cut short (every writer ends each line).
                if i + 1 == lines && component.is_none() {
                    return Err(Cur::new(bytes, Component::Toc, offset).bad(
                        "TOC entry",
                        format!("TOC.txt is cut short: its last line {name:?} names no component"),
                    ));
                }
                let plausible = component.is_some()
                    || name.ends_with(".db")
                    || name.ends_with(".txt")
                    || name.starts_with("Digest.");
                if !plausible || name.contains(['/', '\0']) {
                    return Err(Cur::new(bytes, Component::Toc, offset)
                        .bad("TOC entry", format!("unrecognised component {name:?}")));
                }
                entries.push(TocEntry {
                    name: name.to_string(),
                    component,
                });
            }
            offset += line.len() as u64 + 1;
        }
        if entries.is_empty() {
            return Err(cur.bad("TOC", "empty TOC"));
        }
        Ok(Toc { entries })
    }

    /// True when the TOC lists component `c`.
    pub fn has(&self, c: Component) -> bool {
        self.entries.iter().any(|e| e.component == Some(c))
    }

    /// The suffix as written for component `c` (matters for Digest.*).
    pub fn name_of(&self, c: Component) -> Option<&str> {
        self.entries
            .iter()
            .find(|e| e.component == Some(c))
            .map(|e| e.name.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_rejects() {
        let t = Toc::parse(b"Data.db\nDigest.adler32\nSI_x.db\n\nTOC.txt\n").unwrap();
        assert_eq!(t.entries.len(), 4);
        assert_eq!(t.name_of(Component::Digest), Some("Digest.adler32"));
        assert!(t.entries[2].component.is_none());
        assert!(Toc::parse(b"").is_err());
        assert!(Toc::parse(b"\n\n").is_err());
        assert!(Toc::parse(b"Data.db\nUNRECOGNIZED.foo\n").is_err());
        assert!(Toc::parse(&[0xff, 0xfe]).is_err());
    }
}
