//! One response in progress, as a state machine over its packets (MySQL's "Client/Server
//! Protocol" docs, "Text Resultset" and "Binary Protocol Resultset"): OK or ERR, or result
//! sets of column definitions and rows, several while the status carries
//! SERVER_MORE_RESULTS_EXISTS. The blocking client and the multiplexed sessions feed it
//! the same way; rows are counted, and decoded only when the caller keeps them.

use super::server::{
    column_count, column_type, eof_status, is_eof, keep_binary_row, keep_text_row, parse_err,
    parse_ok,
};
use super::MAX_CHUNK;
use crate::errors::ClientError;
use dbdelta_engine::Outcome;

/// Most columns a result may announce (a prepared statement counts them in 16 bits); a
/// larger count is a corrupt stream, not a wide table.
const MAX_COLUMNS: u64 = u16::MAX as u64;
/// The status flag of an OK or EOF packet that says another result follows.
pub(crate) const SERVER_MORE_RESULTS_EXISTS: u16 = 0x0008;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum State {
    /// The first packet of a result: OK, ERR, LOCAL INFILE request or a column count.
    #[default]
    Start,
    /// Column definitions still to come.
    Columns(u64),
    /// The EOF after the column definitions (no CLIENT_DEPRECATE_EOF).
    ColumnsEof,
    /// Rows until EOF (or an OK with 0xFE under CLIENT_DEPRECATE_EOF).
    Rows,
}

/// What one packet meant for the response.
#[derive(Debug)]
pub(crate) enum Step {
    /// More packets follow.
    More,
    /// The response is complete.
    Done(Result<Outcome, ClientError>),
    /// The server asks for a local file (LOAD DATA LOCAL): the caller must refuse it.
    LocalInfile,
}

/// One response in progress: result sets (several with SERVER_MORE_RESULTS_EXISTS) and OKs.
/// Rows are counted, never decoded.
#[derive(Debug, Default)]
pub(crate) struct ResponseDecoder {
    state: State,
    out: Outcome,
    /// The connection negotiated CLIENT_DEPRECATE_EOF (rows end with an OK packet).
    deprecate_eof: bool,
    /// The response is to COM_STMT_EXECUTE: rows are binary and start with 0x00.
    binary: bool,
    /// Keep the values of this response's rows in `rows` (decoding binary rows needs the
    /// columns' types, read from their definitions).
    pub(crate) capture: bool,
    pub(crate) kept: dbdelta_engine::Rows,
    /// Type and flags of each column of the current result set (when capturing).
    columns: Vec<(u8, u16)>,
}

fn broken(what: &str) -> ClientError {
    ClientError::Protocol(what.to_string())
}

impl ResponseDecoder {
    /// A decoder for a connection with or without CLIENT_DEPRECATE_EOF.
    pub(crate) fn new(deprecate_eof: bool) -> Self {
        ResponseDecoder {
            deprecate_eof,
            ..Default::default()
        }
    }

    /// Starts the response to a new command; `binary` for COM_STMT_EXECUTE.
    pub(crate) fn begin(&mut self, binary: bool) {
        self.state = State::Start;
        self.out = Outcome::default();
        self.binary = binary;
    }

    /// Rows counted so far in this response (the blocking client hands each new row to its
    /// callback).
    pub(crate) fn rows(&self) -> u64 {
        self.out.rows
    }

    fn finish(&mut self, status: u16) -> Step {
        self.state = State::Start;
        if status & SERVER_MORE_RESULTS_EXISTS != 0 {
            return Step::More;
        }
        self.capture = false;
        Step::Done(Ok(std::mem::take(&mut self.out)))
    }

    fn fail(&mut self, p: &[u8]) -> Step {
        self.state = State::Start;
        self.capture = false;
        self.out = Outcome::default();
        Step::Done(Err(parse_err(p)))
    }

    /// Takes one packet payload. `Err` means the stream cannot be trusted any more.
    #[inline]
    pub(crate) fn packet(&mut self, p: &[u8]) -> Result<Step, ClientError> {
        let Some(&first) = p.first() else {
            return Err(broken("an empty packet in a response"));
        };
        match self.state {
            State::Start => match first {
                0x00 => {
                    let (affected, status) = parse_ok(p)?;
                    self.out.affected += affected;
                    Ok(self.finish(status))
                }
                0xFF => Ok(self.fail(p)),
                0xFB => Ok(Step::LocalInfile),
                0xFE => Err(broken("an EOF packet where a response was due")),
                _ => {
                    let cols = column_count(p)
                        .filter(|n| (1..=MAX_COLUMNS).contains(n))
                        .ok_or_else(|| broken("malformed column count"))?;
                    self.out.has_result = true;
                    self.columns.clear();
                    self.state = State::Columns(cols);
                    Ok(Step::More)
                }
            },
            State::Columns(n) => {
                if first == 0xFF {
                    return Ok(self.fail(p));
                }
                if self.capture {
                    self.columns
                        .push(column_type(p).ok_or_else(|| broken("malformed column definition"))?);
                }
                self.state = match (n - 1, self.deprecate_eof) {
                    (0, true) => State::Rows,
                    (0, false) => State::ColumnsEof,
                    (left, _) => State::Columns(left),
                };
                Ok(Step::More)
            }
            State::ColumnsEof => {
                if !is_eof(p) {
                    return Err(broken("expected EOF after the column definitions"));
                }
                self.state = State::Rows;
                Ok(Step::More)
            }
            State::Rows => match first {
                0xFF => Ok(self.fail(p)),
                0xFE if !self.deprecate_eof && is_eof(p) => Ok(self.finish(eof_status(p))),
                // A text row starting with 0xFE has a first value of 16 MiB or more: it is
                // a joined multi-packet payload, never this short.
                0xFE if self.deprecate_eof && p.len() < MAX_CHUNK => {
                    let (_, status) = parse_ok(p)?;
                    Ok(self.finish(status))
                }
                b if self.binary && b != 0x00 => Err(ClientError::Protocol(format!(
                    "a binary result row starting with {b:#04x}"
                ))),
                _ => {
                    self.out.rows += 1;
                    if self.capture {
                        let kept = if self.binary {
                            keep_binary_row(p, &self.columns, &mut self.kept)
                        } else {
                            keep_text_row(p, self.columns.len(), &mut self.kept)
                        };
                        kept.ok_or_else(|| broken("malformed result row"))?;
                    }
                    Ok(Step::More)
                }
            },
        }
    }
}
