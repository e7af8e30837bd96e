//! Is the tutor's confidence a probability, or only a ranking? The mastery
//! predicted before each check against the verdict.
//!
//! # Bins
//! [`BINS`] = 10 equal-width bins over the predicted mastery: bin `i` holds
//! predictions in `[i/10, (i+1)/10)`, the last bin also takes 1.0. Each bin
//! gives a point of the reliability curve: mean prediction against the mean
//! observed outcome.
//!
//! # Outcome of a verdict
//! right = 1, wrong = 0, partial = ½ — the same reading the belief rules give a
//! verdict (a partial is half a success), so the two agree on what was predicted.
//!
//! # Scores
//! * ECE = Σ_bins (n_b / N) · |mean prediction_b − mean outcome_b|;
//! * Brier = mean (p − o)²;
//! * log loss = −mean [o ln p + (1 − o) ln(1 − p)], p clamped to
//!   [[`P_MIN`], 1 − [`P_MIN`]] so a confident miss costs a lot but not infinity.
//!
//! A binned score alone can be gamed (predicting each bin's base rate scores
//! ECE 0 without ranking anything), so Brier and log loss are reported beside it.
//!
//! # Status
//! "calibrated" only from [`MIN_PREDICTED`] = 5 predicted checks on, and only
//! when the ECE is at most [`CALIBRATED_ECE`] = 0.10 (our choice: an average
//! miss of ten points is the most a "probability" reading can tolerate).
//! Below five it is [`Status::TooFew`]; above the ECE bound
//! [`Status::Miscalibrated`]. Until calibrated, confidence is a ranking.

use serde::Serialize;

use crate::episodes::Verdict;

pub const BINS: usize = 10;
pub const MIN_PREDICTED: usize = 5;
pub const CALIBRATED_ECE: f64 = 0.10;
pub const P_MIN: f64 = 1e-6;

/// One check with the mastery predicted before it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Prediction {
    pub predicted: f64,
    /// 1 right, 0 wrong, ½ partial ([`outcome`]).
    pub outcome: f64,
}

/// The observed outcome of a verdict.
pub fn outcome(v: Verdict) -> f64 {
    match v {
        Verdict::Right => 1.0,
        Verdict::Partial => 0.5,
        Verdict::Wrong => 0.0,
    }
}

/// One point of the reliability curve.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Bin {
    pub lo: f64,
    pub hi: f64,
    pub n: usize,
    /// `None` for an empty bin.
    pub mean_predicted: Option<f64>,
    pub mean_outcome: Option<f64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    TooFew,
    Calibrated,
    Miscalibrated,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::TooFew => "too few predicted checks",
            Status::Calibrated => "calibrated",
            Status::Miscalibrated => "not calibrated",
        }
    }
}

/// Calibration over every predicted check.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Calibration {
    /// Predicted checks counted.
    pub n: usize,
    /// Predictions set aside because they were not a number in [0, 1].
    pub ignored: usize,
    pub bins: Vec<Bin>,
    /// `None` when `n` is 0.
    pub ece: Option<f64>,
    pub brier: Option<f64>,
    pub log_loss: Option<f64>,
    pub status: Status,
}

impl Calibration {
    pub fn calibrated(&self) -> bool {
        self.status == Status::Calibrated
    }
}

fn bin_of(p: f64) -> usize {
    ((p * BINS as f64).floor() as usize).min(BINS - 1)
}

/// The reliability curve, ECE, Brier score and log loss of `predictions`.
pub fn calibrate(predictions: &[Prediction]) -> Calibration {
    let valid: Vec<&Prediction> = predictions
        .iter()
        .filter(|p| {
            p.predicted.is_finite()
                && (0.0..=1.0).contains(&p.predicted)
                && p.outcome.is_finite()
                && (0.0..=1.0).contains(&p.outcome)
        })
        .collect();
    let n = valid.len();
    let mut sums = vec![(0usize, 0.0f64, 0.0f64); BINS];
    let (mut brier, mut log_loss) = (0.0, 0.0);
    for p in &valid {
        let b = &mut sums[bin_of(p.predicted)];
        b.0 += 1;
        b.1 += p.predicted;
        b.2 += p.outcome;
        brier += (p.predicted - p.outcome).powi(2);
        let q = p.predicted.clamp(P_MIN, 1.0 - P_MIN);
        log_loss -= p.outcome * q.ln() + (1.0 - p.outcome) * (1.0 - q).ln();
    }
    let bins: Vec<Bin> = sums
        .iter()
        .enumerate()
        .map(|(i, &(k, sp, so))| Bin {
            lo: i as f64 / BINS as f64,
            hi: (i + 1) as f64 / BINS as f64,
            n: k,
            mean_predicted: (k > 0).then(|| sp / k as f64),
            mean_outcome: (k > 0).then(|| so / k as f64),
        })
        .collect();
    let ece = (n > 0).then(|| {
        bins.iter()
            .filter_map(|b| {
                Some(b.n as f64 / n as f64 * (b.mean_predicted? - b.mean_outcome?).abs())
            })
            .sum::<f64>()
    });
    let status = match ece {
        _ if n < MIN_PREDICTED => Status::TooFew,
        Some(e) if e <= CALIBRATED_ECE => Status::Calibrated,
        _ => Status::Miscalibrated,
    };
    Calibration {
        n,
        ignored: predictions.len() - n,
        bins,
        ece,
        brier: (n > 0).then(|| brier / n as f64),
        log_loss: (n > 0).then(|| log_loss / n as f64),
        status,
    }
}
