//! Latency histograms: HdrHistogram in nanoseconds, summarised in microseconds, and stored
//! in result files as V2-deflate, base64 so that reports can merge and recompute them.
#![deny(missing_docs)]

use base64::Engine as _;
use dbdelta_model::LatencySummary;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use hdrhistogram::Histogram;

/// Significant digits of the step histograms.
pub const SIGFIG: u8 = 3;

/// Why a stored histogram could not be read back.
#[derive(Debug, thiserror::Error)]
pub enum HistogramError {
    /// The text is not base64.
    #[error("stored latency histogram is unreadable: {0}")]
    Base64(#[from] base64::DecodeError),
    /// The bytes are not a V2-deflate histogram.
    #[error("stored latency histogram is unreadable: {0:?}")]
    Decode(#[from] hdrhistogram::serialization::DeserializeError),
    /// Two histograms could not be added (their ranges do not fit).
    #[error("stored latency histogram is unreadable: {0:?}")]
    Add(#[from] hdrhistogram::errors::AdditionError),
}

/// A new auto-resizing latency histogram (values in nanoseconds).
pub fn new_histogram() -> Histogram<u64> {
    let mut h = Histogram::<u64>::new(SIGFIG).expect("3 significant figures are valid");
    h.auto(true);
    h
}

/// A new auto-resizing latency histogram with 2 significant figures (values within 1 %):
/// about a tenth of [`new_histogram`]'s memory, for the per-second data every worker keeps.
pub fn new_compact_histogram() -> Histogram<u64> {
    let mut h = Histogram::<u64>::new(2).expect("2 significant figures are valid");
    h.auto(true);
    h
}

/// Records a latency in nanoseconds (0 is stored as 1 ns: the histogram's floor).
#[inline]
pub fn record_ns(h: &mut Histogram<u64>, ns: u64) {
    // Auto-resize never fails for u64 values.
    let _ = h.record(ns.max(1));
}

/// Percentiles and mean of a nanosecond histogram, in microseconds, plus its encoding.
pub fn summarize(h: &Histogram<u64>) -> LatencySummary {
    if h.is_empty() {
        return LatencySummary::default();
    }
    let us = |ns: u64| ns as f64 / 1000.0;
    LatencySummary {
        mean_us: h.mean() / 1000.0,
        p50_us: us(h.value_at_quantile(0.50)),
        p95_us: us(h.value_at_quantile(0.95)),
        p99_us: us(h.value_at_quantile(0.99)),
        p999_us: us(h.value_at_quantile(0.999)),
        max_us: us(h.max()),
        count: h.len(),
        histogram: encode(h),
    }
}

/// V2-deflate + base64 encoding of a histogram.
pub fn encode(h: &Histogram<u64>) -> String {
    let mut buf = Vec::new();
    match V2DeflateSerializer::new().serialize(h, &mut buf) {
        Ok(_) => base64::engine::general_purpose::STANDARD.encode(buf),
        Err(_) => String::new(),
    }
}

/// Decodes [`encode`]'s output.
pub fn decode(text: &str) -> Result<Histogram<u64>, HistogramError> {
    let bytes = base64::engine::general_purpose::STANDARD.decode(text.trim())?;
    let mut h: Histogram<u64> = Deserializer::new().deserialize(&mut bytes.as_slice())?;
    h.auto(true);
    Ok(h)
}

/// Merges several stored histograms (e.g. the same step measured in several runs).
pub fn merge_encoded<'a>(
    texts: impl IntoIterator<Item = &'a str>,
) -> Result<Histogram<u64>, HistogramError> {
    let mut total = new_histogram();
    for t in texts {
        total.add(decode(t)?)?;
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_in_microseconds() {
        let mut h = new_histogram();
        for i in 1..=1000u64 {
            record_ns(&mut h, i * 1000); // 1..1000 µs
        }
        let s = summarize(&h);
        assert_eq!(s.count, 1000);
        assert!((s.p50_us - 500.0).abs() < 1.0, "{}", s.p50_us);
        assert!((s.p95_us - 950.0).abs() < 1.0, "{}", s.p95_us);
        assert!((s.max_us - 1000.0).abs() < 1.0);
        assert!((s.mean_us - 500.5).abs() < 0.5);
    }

    #[test]
    fn roundtrip_and_merge_is_order_independent() {
        let mut a = new_histogram();
        let mut b = new_histogram();
        for i in 0..500u64 {
            record_ns(&mut a, 1000 + i);
            record_ns(&mut b, 5_000_000 + i * 7);
        }
        let (ea, eb) = (encode(&a), encode(&b));
        let ab = merge_encoded([ea.as_str(), eb.as_str()]).unwrap();
        let ba = merge_encoded([eb.as_str(), ea.as_str()]).unwrap();
        assert_eq!(ab.len(), 1000);
        assert_eq!(summarize(&ab).p99_us, summarize(&ba).p99_us);
        assert_eq!(decode(&ea).unwrap().len(), 500);
        assert!(decode("not base64!").is_err());
    }

    #[test]
    fn empty_histogram_summarises_to_zero() {
        assert_eq!(summarize(&new_histogram()), LatencySummary::default());
    }
}
