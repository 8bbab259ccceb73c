//! `OP_MSG` framing (MongoDB's wire protocol docs, "OP_MSG"): a 16-byte header, flag bits,
//! one body section (kind 0) and document sequences (kind 1). No I/O: requests are
//! appended to a buffer, replies are cut from received bytes, and a message's length is
//! checked against the server's `maxMessageSizeBytes` from its header alone, before any
//! buffer grows to hold it.

use dbdelta_engine::EngineError;

/// The opcode of `OP_MSG`.
pub const OP_MSG: i32 = 2013;
/// The opcode of `OP_COMPRESSED` (never negotiated by this client, so refused).
const OP_COMPRESSED: i32 = 2012;
/// Flag bit: a CRC-32C checksum follows the sections.
const CHECKSUM_PRESENT: u32 = 1;
/// Flag bit: another message follows without a request (exhaust cursors; never asked for).
const MORE_TO_COME: u32 = 1 << 1;
/// Bytes of the standard message header.
pub const HEADER: usize = 16;

/// The size limits the server announced in its `hello` reply (its defaults until then).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// `maxBsonObjectSize`: the largest document.
    pub max_bson: usize,
    /// `maxMessageSizeBytes`: the largest message, header included.
    pub max_message: usize,
    /// `maxWriteBatchSize`: the most documents in one write command.
    pub max_batch: usize,
}

impl Default for Limits {
    /// MongoDB's documented defaults: 16 MiB documents, 48 MB messages, 100 000 writes.
    fn default() -> Self {
        Limits {
            max_bson: 16 * 1024 * 1024,
            max_message: 48_000_000,
            max_batch: 100_000,
        }
    }
}

impl Limits {
    /// The largest command document: drivers allow `maxBsonObjectSize` plus 16 KiB for the
    /// command's own fields (MongoDB's driver specifications, "Message size limits").
    pub fn max_command(&self) -> usize {
        self.max_bson + 16 * 1024
    }
}

/// One received `OP_MSG`: its ids and its body document's bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reply<'a> {
    /// The request this replies to.
    pub response_to: i32,
    /// The body section (a BSON document).
    pub body: &'a [u8],
}

fn protocol(msg: impl std::fmt::Display) -> EngineError {
    EngineError::connection(format!("MongoDB protocol error: {msg}"))
}

fn i32_at(b: &[u8], at: usize) -> i32 {
    let mut w = [0u8; 4];
    w.copy_from_slice(&b[at..at + 4]);
    i32::from_le_bytes(w)
}

/// Cuts one message from the front of `input`: `Ok(None)` until it is complete, else the
/// reply and the bytes it took. A length above `limits.max_message` is refused as soon as
/// the header's first four bytes arrived.
pub fn split<'a>(
    input: &'a [u8],
    limits: &Limits,
) -> Result<Option<(Reply<'a>, usize)>, EngineError> {
    if input.len() < 4 {
        return Ok(None);
    }
    let len = i32_at(input, 0);
    let len =
        usize::try_from(len).map_err(|_| protocol(format!("negative message length {len}")))?;
    if len > limits.max_message {
        return Err(protocol(format!(
            "a message of {len} bytes is larger than the server's maxMessageSizeBytes ({})",
            limits.max_message
        )));
    }
    if len < HEADER + 5 {
        return Err(protocol(format!(
            "a message of {len} bytes is too short for OP_MSG"
        )));
    }
    if input.len() < len {
        return Ok(None);
    }
    let msg = &input[..len];
    let response_to = i32_at(msg, 8);
    match i32_at(msg, 12) {
        OP_MSG => {}
        OP_COMPRESSED => {
            return Err(protocol(
                "OP_COMPRESSED reply without negotiated compression",
            ))
        }
        op => {
            return Err(protocol(format!(
                "unexpected opcode {op} (only OP_MSG is spoken)"
            )))
        }
    }
    let flags = i32_at(msg, HEADER) as u32;
    if flags & MORE_TO_COME != 0 {
        return Err(protocol("moreToCome set on a reply nobody asked to stream"));
    }
    let end = if flags & CHECKSUM_PRESENT != 0 {
        len.checked_sub(4)
            .ok_or_else(|| protocol("checksum flag on a short message"))?
    } else {
        len
    };
    let mut at = HEADER + 4;
    let mut body = None;
    while at < end {
        let kind = msg[at];
        at += 1;
        if at + 4 > end {
            return Err(protocol("truncated section"));
        }
        let size =
            usize::try_from(i32_at(msg, at)).map_err(|_| protocol("negative section size"))?;
        if size < 5 || at + size > end {
            return Err(protocol(format!(
                "section of {size} bytes overruns its message"
            )));
        }
        match kind {
            0 if body.is_none() => body = Some(&msg[at..at + size]),
            0 => return Err(protocol("two body sections in one message")),
            1 => {}
            k => return Err(protocol(format!("unknown section kind {k}"))),
        }
        at += size;
    }
    let body = body.ok_or_else(|| protocol("a message without a body section"))?;
    Ok(Some((Reply { response_to, body }, len)))
}

/// Appends one `OP_MSG` with request id `id`: the `body` document and, when given, one
/// document sequence named `seq.0` holding the concatenated documents `seq.1`. Refuses a
/// message over `limits.max_message` (nothing is appended then).
pub fn encode(
    out: &mut Vec<u8>,
    id: i32,
    body: &[u8],
    seq: Option<(&str, &[u8])>,
    limits: &Limits,
) -> Result<(), EngineError> {
    if body.len() > limits.max_command() {
        return Err(EngineError::statement(format!(
            "a command of {} bytes is larger than the server's maxBsonObjectSize ({}) plus 16 KiB",
            body.len(),
            limits.max_bson
        )));
    }
    let seq_len = seq.map_or(0, |(name, docs)| 1 + 4 + name.len() + 1 + docs.len());
    let len = HEADER + 4 + 1 + body.len() + seq_len;
    if len > limits.max_message {
        return Err(EngineError::statement(format!(
            "a message of {len} bytes is larger than the server's maxMessageSizeBytes ({})",
            limits.max_message
        )));
    }
    let len32 = i32::try_from(len).map_err(|_| EngineError::statement("message too large"))?;
    out.reserve(len);
    out.extend_from_slice(&len32.to_le_bytes());
    out.extend_from_slice(&id.to_le_bytes());
    out.extend_from_slice(&0i32.to_le_bytes());
    out.extend_from_slice(&OP_MSG.to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    out.push(0);
    out.extend_from_slice(body);
    if let Some((name, docs)) = seq {
        out.push(1);
        let size = (4 + name.len() + 1 + docs.len()) as i32;
        out.extend_from_slice(&size.to_le_bytes());
        out.extend_from_slice(name.as_bytes());
        out.push(0);
        out.extend_from_slice(docs);
    }
    Ok(())
}

/// The request id of a message this client encoded (tests, the blocking path).
pub fn request_id(msg: &[u8]) -> Option<i32> {
    (msg.len() >= HEADER).then(|| i32_at(msg, 4))
}

/// A reply message as a server would send it (tests and the protocol fuzzing target).
pub fn reply(response_to: i32, body: &[u8]) -> Vec<u8> {
    let len = (HEADER + 4 + 1 + body.len()) as i32;
    let mut out = Vec::with_capacity(len as usize);
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(&(response_to.wrapping_add(1_000_000)).to_le_bytes());
    out.extend_from_slice(&response_to.to_le_bytes());
    out.extend_from_slice(&OP_MSG.to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    out.push(0);
    out.extend_from_slice(body);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_with_a_sequence() {
        let l = Limits::default();
        let body = [5u8, 0, 0, 0, 0];
        let mut out = Vec::new();
        encode(&mut out, 7, &body, Some(("documents", &body)), &l).unwrap();
        assert_eq!(request_id(&out), Some(7));
        // A reply is the same shape; cut it whole and in part.
        let r = reply(7, &body);
        assert_eq!(split(&r[..r.len() - 1], &l).unwrap(), None);
        let (m, used) = split(&r, &l).unwrap().unwrap();
        assert_eq!((m.response_to, m.body, used), (7, &body[..], r.len()));
    }

    #[test]
    fn an_oversized_header_is_refused_before_the_body_arrives() {
        let l = Limits {
            max_message: 1000,
            ..Limits::default()
        };
        let e = split(&2000i32.to_le_bytes(), &l).unwrap_err();
        assert!(e.message.contains("maxMessageSizeBytes (1000)"), "{e}");
        let mut out = Vec::new();
        let big = vec![0u8; 2000];
        assert!(encode(&mut out, 1, &big, None, &l).is_err());
        assert!(out.is_empty());
    }
}
