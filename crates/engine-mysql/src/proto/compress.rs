//! The compressed protocol's frames (MySQL's "Client/Server Protocol" docs, "Compression"):
//! with CLIENT_COMPRESS the packet stream is cut into frames of a 7-byte header (3-byte
//! length of the frame payload, a sequence id of its own, 3-byte uncompressed length, 0
//! when the payload is stored as is) and a zlib stream. Frames and packets are
//! independent: one frame may hold several packets or part of one. Payloads shorter than
//! [`MIN_COMPRESS`] bytes, and those zlib cannot shrink, are stored as is.

use super::u24;
use flate2::{Compress, CompressError, Decompress, DecompressError, FlushCompress};
use flate2::{FlushDecompress, Status};

/// Shorter frame payloads are sent uncompressed, like libmysqlclient's `MIN_COMPRESS_LENGTH`.
pub(crate) const MIN_COMPRESS: usize = 50;
/// Size of a compressed frame's header.
pub(crate) const FRAME_HEADER: usize = 7;

/// A frame the server sent that does not inflate to what its header says.
#[derive(Debug, thiserror::Error)]
pub(crate) enum FrameError {
    /// zlib refused the frame's stream.
    #[error("corrupt compressed packet from the server: {0}")]
    Inflate(#[source] DecompressError),
    /// The stream ended early or inflated to another length.
    #[error("corrupt compressed packet from the server: length mismatch")]
    Length,
}

/// A frame header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FrameHeader {
    /// Length of the frame's payload as sent.
    pub len: usize,
    /// The frame's sequence id.
    pub seq: u8,
    /// Length of the payload inflated; 0 when it is stored as is.
    pub inflated: usize,
}

/// Parses the first [`FRAME_HEADER`] bytes of `h`.
pub(crate) fn parse_frame_header(h: &[u8]) -> FrameHeader {
    FrameHeader {
        len: u24(h),
        seq: h[3],
        inflated: u24(&h[4..]),
    }
}

/// Inflates a frame's zlib stream `input` into `out`, which is exactly as long as the
/// header's inflated length.
pub(crate) fn inflate_frame(
    inflate: &mut Decompress,
    input: &[u8],
    out: &mut [u8],
) -> Result<(), FrameError> {
    inflate.reset(true);
    let st = inflate
        .decompress(input, out, FlushDecompress::Finish)
        .map_err(FrameError::Inflate)?;
    if st != Status::StreamEnd || inflate.total_out() != out.len() as u64 {
        return Err(FrameError::Length);
    }
    Ok(())
}

/// Appends one frame with sequence id `seq` holding `data` (at most 16 MiB − 1 bytes) to
/// `out`: compressed when that pays, stored as is otherwise.
pub(crate) fn push_frame(
    deflate: &mut Compress,
    seq: u8,
    data: &[u8],
    out: &mut Vec<u8>,
) -> Result<(), CompressError> {
    let start = out.len();
    out.resize(start + FRAME_HEADER, 0);
    let mut ulen = 0;
    if data.len() >= MIN_COMPRESS {
        deflate.reset();
        out.reserve(data.len() + data.len() / 16 + 64);
        loop {
            let done = deflate.total_in() as usize;
            let st = deflate.compress_vec(&data[done..], out, FlushCompress::Finish)?;
            if st == Status::StreamEnd {
                break;
            }
            out.reserve(4096);
        }
        if out.len() - start - FRAME_HEADER < data.len() {
            ulen = data.len();
        } else {
            // Incompressible: store as is.
            out.truncate(start + FRAME_HEADER);
        }
    }
    if ulen == 0 {
        out.extend_from_slice(data);
    }
    let clen = out.len() - start - FRAME_HEADER;
    let h = &mut out[start..start + FRAME_HEADER];
    h[..3].copy_from_slice(&(clen as u32).to_le_bytes()[..3]);
    h[3] = seq;
    h[4..].copy_from_slice(&(ulen as u32).to_le_bytes()[..3]);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use flate2::Compression;

    #[test]
    fn frames_store_short_payloads_and_compress_long_ones() {
        let mut deflate = Compress::new(Compression::default(), true);
        let mut out = Vec::new();
        push_frame(&mut deflate, 3, b"tiny", &mut out).unwrap();
        let h = parse_frame_header(&out);
        assert_eq!((h.len, h.seq, h.inflated), (4, 3, 0));
        assert_eq!(&out[FRAME_HEADER..], b"tiny");
        let text = b"SELECT c FROM sbtest1 ".repeat(20);
        out.clear();
        push_frame(&mut deflate, 4, &text, &mut out).unwrap();
        let h = parse_frame_header(&out);
        assert_eq!((h.seq, h.inflated), (4, text.len()));
        assert!(h.len < text.len());
        let mut inflate = Decompress::new(true);
        let mut back = vec![0; h.inflated];
        inflate_frame(&mut inflate, &out[FRAME_HEADER..], &mut back).unwrap();
        assert_eq!(back, text);
        let mut short = vec![0; h.inflated + 1];
        assert!(inflate_frame(&mut inflate, &out[FRAME_HEADER..], &mut short).is_err());
    }
}
