//! `tdm mcp`: an MCP server whose tools are the approved plugins' intents (docs/mcp.md), over
//! stdio ([`stdio`]) or Streamable HTTP ([`http`]). The handshake revisions 2025-03-26,
//! 2025-06-18 and 2025-11-25 and the stateless 2026-07-28 ([`session`]); calls run as
//! `tdm call` runs them ([`calls`]).
//! SIGINT or SIGTERM cancels the calls in flight, waits for them, and exits 0.

mod calls;
mod http;
mod last_calls;
mod server;
mod session;
mod stdio;
mod threads;
mod watch;
mod wire;

use crate::cli::args::{GlobalArgs, WorkspaceArg};
use crate::cli::report::CliError;
use crate::exit::EXIT_COMPLETED;
use crate::terminal::errln;
use clap::Args;
use server::Server;
use session::McpSession;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use tdm_sdk::environment::Cancel;
use tdm_sdk::workspace::{workspace_dir, Workspace};

const EXAMPLES: &str = "\
Examples:
  tdm mcp                                  (every approved plugin's intents, over stdio)
  tdm mcp --plugin echo                    (only echo's)
  tdm mcp --http 127.0.0.1:8765            (Streamable HTTP at http://127.0.0.1:8765/mcp)
  tdm mcp --http 0.0.0.0:8765 --token-file token.txt   (another address needs a bearer token)
  claude mcp add contour -- tdm mcp        (docs/mcp.md: Claude Desktop, VS Code, Cursor)";

/// `tdm mcp`'s flags.
#[derive(Debug, Args)]
#[command(after_help = EXAMPLES)]
pub struct McpArgs {
    /// Serve only this installed plugin's intents (repeatable)
    #[arg(long = "plugin", value_name = "ID")]
    plugins: Vec<String>,
    /// Calls run at once [default: one per core]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=256))]
    workers: Option<u16>,
    /// Serve Streamable HTTP at http://ADDR:PORT/mcp instead of stdio (loopback unless --token-file)
    #[arg(long, value_name = "ADDR:PORT")]
    http: Option<std::net::SocketAddr>,
    /// With --http: every request must carry `Authorization: Bearer TOKEN`, TOKEN this file's text
    #[arg(long, value_name = "FILE", requires = "http")]
    token_file: Option<PathBuf>,
    /// Record each call to a trace file in DIR (`tdm replay` replays it; its audit entries name it)
    #[arg(long, value_name = "DIR", conflicts_with = "warm")]
    record_dir: Option<PathBuf>,
    /// Let this plugin's calls reuse a warm instance (repeatable); by default each call runs in a fresh one
    #[arg(long, value_name = "ID")]
    warm: Vec<String>,
    #[command(flatten)]
    ws: WorkspaceArg,
}

/// Runs `tdm mcp`; the exit code.
pub fn main(args: &McpArgs, _global: &GlobalArgs) -> u8 {
    serve(args).unwrap_or_else(|e| e.print(false))
}

fn serve(args: &McpArgs) -> Result<u8, CliError> {
    let dir = workspace_dir(args.ws.workspace.as_deref());
    let sigterm = Arc::new(AtomicBool::new(false));
    if let Err(e) = signal_hook::flag::register(signal_hook::consts::SIGTERM, Arc::clone(&sigterm)) {
        errln!("tdm mcp: warning: SIGTERM cannot stop the server gracefully ({e})");
    }
    let record_dir = match &args.record_dir {
        Some(dir) => Some(record_dir(dir)?),
        None => None,
    };
    let workers = args.workers.map_or_else(|| std::thread::available_parallelism().map_or(1, usize::from), usize::from);
    let server = Arc::new(Server {
        sigint: Cancel::on_sigint().map_err(|e| errln!("tdm mcp: warning: Ctrl-C cannot stop the server ({e})")).ok(),
        sigterm,
        ended: Arc::new(AtomicBool::new(false)),
        workspace: Workspace::existing(dir.clone()),
        only: args.plugins.clone(),
        record_dir,
        calls: calls::Shared::new(calls::workers(workers), args.warm.clone()),
        max_in_flight: workers * 4,
    });
    server.calls.last_calls.start(&server.workspace, Arc::clone(&server.ended));
    match args.http {
        Some(addr) => {
            let token = http::token(addr, args.token_file.as_deref())?;
            http::serve(addr, token, &server)?;
        }
        None => {
            errln!("tdm mcp: serving the approved plugins of {} over stdio", dir.display());
            let mut session = McpSession::new(&server);
            session.calls.inline = true;
            let session = Arc::new(session);
            stdio::serve(&session, &server);
        }
    }
    server.ended.store(true, Ordering::Relaxed);
    server.calls.last_calls.flush(&server.workspace);
    Ok(EXIT_COMPLETED)
}

/// The `--record-dir` folder, created when missing; refused when it is something else.
fn record_dir(dir: &std::path::Path) -> Result<PathBuf, CliError> {
    if let Err(e) = std::fs::create_dir_all(dir) {
        return Err(CliError::io(format!("--record-dir {}: {e}", dir.display())));
    }
    match std::fs::symlink_metadata(dir) {
        Ok(meta) if meta.is_dir() => Ok(dir.to_path_buf()),
        _ => Err(CliError::usage(format!("--record-dir {}: not a folder", dir.display()))),
    }
}
