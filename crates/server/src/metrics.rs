//! What is the service doing? Request counts by route and status, latency
//! histograms by route, and how many blocks were built or dropped at the cap,
//! in the Prometheus text format at `/metrics`.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// Upper bounds of the latency buckets, in seconds.
const BUCKETS: [f64; 12] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0,
];

#[derive(Default)]
struct Latency {
    buckets: [u64; BUCKETS.len()],
    count: u64,
    sum: f64,
}

/// The service's counters.
#[derive(Default)]
pub struct Metrics {
    requests: Mutex<BTreeMap<(String, String, u16), u64>>,
    latency: Mutex<BTreeMap<(String, String), Latency>>,
    blocks_built: AtomicU64,
    blocks_dropped: AtomicU64,
}

impl Metrics {
    pub fn observe(&self, method: &str, route: &str, status: u16, seconds: f64) {
        *self
            .requests
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry((method.to_string(), route.to_string(), status))
            .or_default() += 1;
        let mut lat = self.latency.lock().unwrap_or_else(|p| p.into_inner());
        let l = lat
            .entry((method.to_string(), route.to_string()))
            .or_default();
        for (i, le) in BUCKETS.iter().enumerate() {
            if seconds <= *le {
                l.buckets[i] += 1;
            }
        }
        l.count += 1;
        l.sum += seconds;
    }

    /// Counts one block request: built in time, or dropped at the cap.
    pub fn block(&self, dropped: bool) {
        if dropped {
            self.blocks_dropped.fetch_add(1, Ordering::Relaxed);
        } else {
            self.blocks_built.fetch_add(1, Ordering::Relaxed);
        }
    }

    pub fn blocks_dropped(&self) -> u64 {
        self.blocks_dropped.load(Ordering::Relaxed)
    }

    /// The Prometheus text exposition.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "# HELP tm_http_requests_total HTTP requests by route and status."
        );
        let _ = writeln!(out, "# TYPE tm_http_requests_total counter");
        for ((m, r, s), n) in self
            .requests
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
        {
            let _ = writeln!(
                out,
                "tm_http_requests_total{{method=\"{m}\",route=\"{}\",status=\"{s}\"}} {n}",
                label(r)
            );
        }
        let _ = writeln!(
            out,
            "# HELP tm_http_request_duration_seconds Request latency by route."
        );
        let _ = writeln!(out, "# TYPE tm_http_request_duration_seconds histogram");
        for ((m, r), l) in self
            .latency
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
        {
            let r = label(r);
            for (i, le) in BUCKETS.iter().enumerate() {
                let _ = writeln!(
                    out,
                    "tm_http_request_duration_seconds_bucket{{method=\"{m}\",route=\"{r}\",le=\"{le}\"}} {}",
                    l.buckets[i]
                );
            }
            let _ = writeln!(
                out,
                "tm_http_request_duration_seconds_bucket{{method=\"{m}\",route=\"{r}\",le=\"+Inf\"}} {}",
                l.count
            );
            let _ = writeln!(
                out,
                "tm_http_request_duration_seconds_sum{{method=\"{m}\",route=\"{r}\"}} {}",
                l.sum
            );
            let _ = writeln!(
                out,
                "tm_http_request_duration_seconds_count{{method=\"{m}\",route=\"{r}\"}} {}",
                l.count
            );
        }
        let _ = writeln!(
            out,
            "# HELP tm_blocks_built_total Memory blocks built within the time cap."
        );
        let _ = writeln!(out, "# TYPE tm_blocks_built_total counter");
        let _ = writeln!(
            out,
            "tm_blocks_built_total {}",
            self.blocks_built.load(Ordering::Relaxed)
        );
        let _ = writeln!(
            out,
            "# HELP tm_blocks_dropped_total Memory blocks dropped at the time cap."
        );
        let _ = writeln!(out, "# TYPE tm_blocks_dropped_total counter");
        let _ = writeln!(out, "tm_blocks_dropped_total {}", self.blocks_dropped());
        out
    }
}

/// Escapes a label value (routes are ours, but stay safe).
fn label(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}
