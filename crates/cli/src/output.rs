//! Writing what the binary prints: standard output that tolerates a closed pipe, and files
//! given with `-o`.

use anyhow::{Context, Result};
use std::io::Write;
use std::path::Path;

/// Writes to stdout; a closed pipe (`| head`) is not an error.
pub fn print_out(text: &str) -> Result<()> {
    write_stdout(text).context("writing to standard output")
}

/// Writes to stdout; a closed pipe is not an error.
pub fn write_stdout(text: &str) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

/// Writes a report to the file of `-o`: atomically, or through a link to a regular file;
/// a device, FIFO, socket or directory is refused (exit 2) and left as it is.
pub fn write_output(path: &Path, text: &str) -> Result<()> {
    use dbdelta_kit::outfile::{write_file, OutFileError};
    match write_file(path, text.as_bytes()) {
        Ok(()) => Ok(()),
        Err(refused @ OutFileError::NotAFile { .. }) => Err(anyhow::anyhow!("-o {refused}")),
        Err(e) => Err(e).with_context(|| {
            format!(
                "-o {}: cannot write the file; choose a writable path",
                path.display()
            )
        }),
    }
}
