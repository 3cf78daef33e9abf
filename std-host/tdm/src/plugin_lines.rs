//! What a plugin said while an intent ran, as tdm shows it on stderr: the host's notices (its
//! `log` lines, held while it ran, and an audit log that could not be written), then its
//! captured output, each line marked as the plugin's or tdm's and escaped, so a plugin's bytes
//! never reach the terminal raw. The library hands these over as data ([`RunReport`]).

use crate::terminal::textln;
use std::io::{self, Write};
use tdm_sdk::session::RunReport;

/// Writes `ran`'s notices and (unless `quiet`, `-q`) the plugin's captured output to `err`.
pub fn write(ran: &RunReport, quiet: bool, err: &mut dyn Write) -> io::Result<()> {
    for notice in &ran.notices {
        if notice.is_plugin_line() {
            textln!(err, "{notice}")?;
        } else {
            textln!(err, "tdm: {notice}")?;
        }
    }
    if quiet {
        return Ok(());
    }
    let report = &ran.report;
    for (stream, bytes) in [("stdout", &report.stdout), ("stderr", &report.stderr)] {
        for line in String::from_utf8_lossy(bytes).lines() {
            textln!(err, "[plugin {stream}] {line}")?;
        }
    }
    if report.output_dropped > 0 {
        textln!(err, "[plugin] {} bytes of output dropped (capture limit)", report.output_dropped)?;
    }
    Ok(())
}
